"""Write ``helpers/base/unicode_data.py`` from Unicode's own data files, so the memory's defences use
Unicode's sets of invisible characters and bracket look-alikes, not a hand list.

    python tools/make_unicode_data.py FOLDER   # FOLDER holds the four files below, of one Unicode version

The files (https://www.unicode.org/Public/<version>/ucd/ and .../Public/security/<version>/):
``DerivedCoreProperties.txt``, ``DerivedGeneralCategory.txt``, ``UnicodeData.txt`` and ``confusables.txt``.
They are read here, by the developer, once; nothing is downloaded when the helpers run or in CI.
The generated module records each file's header (version, date, copyright) and SHA-256, and carries
the Unicode License V3 under which the data is used.
"""
from __future__ import annotations

import argparse
import hashlib
import re
import sys
from pathlib import Path

OUTPUT = Path(__file__).resolve().parent.parent / "helpers" / "base" / "unicode_data.py"
FILES = ("DerivedCoreProperties.txt", "DerivedGeneralCategory.txt", "UnicodeData.txt", "confusables.txt")
ANGLES = {"<", ">"}
# Unicode names that call a character an angle bracket, or the less-than or greater-than sign it is drawn as
ANGLE_NAME = re.compile(r"ANGLE BRACKET|ANGLE QUOTATION MARK|LESS-THAN|GREATER-THAN")

LICENCE = """\
UNICODE LICENSE V3

COPYRIGHT AND PERMISSION NOTICE

Copyright © 1991-2025 Unicode, Inc.

NOTICE TO USER: Carefully read the following legal agreement. BY
DOWNLOADING, INSTALLING, COPYING OR OTHERWISE USING DATA FILES, AND/OR
SOFTWARE, YOU UNEQUIVOCALLY ACCEPT, AND AGREE TO BE BOUND BY, ALL OF THE
TERMS AND CONDITIONS OF THIS AGREEMENT. IF YOU DO NOT AGREE, DO NOT
DOWNLOAD, INSTALL, COPY, DISTRIBUTE OR USE THE DATA FILES OR SOFTWARE.

Permission is hereby granted, free of charge, to any person obtaining a
copy of data files and any associated documentation (the "Data Files") or
software and any associated documentation (the "Software") to deal in the
Data Files or Software without restriction, including without limitation
the rights to use, copy, modify, merge, publish, distribute, and/or sell
copies of the Data Files or Software, and to permit persons to whom the
Data Files or Software are furnished to do so, provided that either (a)
this copyright and permission notice appear with all copies of the Data
Files or Software, or (b) this copyright and permission notice appear in
associated Documentation.

THE DATA FILES AND SOFTWARE ARE PROVIDED "AS IS", WITHOUT WARRANTY OF ANY
KIND, EXPRESS OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF
MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT OF
THIRD PARTY RIGHTS.

IN NO EVENT SHALL THE COPYRIGHT HOLDER OR HOLDERS INCLUDED IN THIS NOTICE
BE LIABLE FOR ANY CLAIM, OR ANY SPECIAL INDIRECT OR CONSEQUENTIAL DAMAGES,
OR ANY DAMAGES WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS,
WHETHER IN AN ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION,
ARISING OUT OF OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THE DATA
FILES OR SOFTWARE.

Except as contained in this notice, the name of a copyright holder shall
not be used in advertising or otherwise to promote the sale, use or other
dealings in these Data Files or Software without prior written
authorization of the copyright holder.

SPDX-License-Identifier: Unicode-3.0"""


def ranges_of(path: Path, value: str | set[str], *, section: str | None = None) -> list[tuple[int, int, str]]:
    """The ``(first, last, comment)`` lines of a UCD property file whose value is ``value`` (one of them)."""
    values = {value} if isinstance(value, str) else value
    found = []
    inside = section is None
    for line in path.read_text(encoding="utf-8").splitlines():
        if section is not None and line.startswith("# Derived Property: "):
            inside = line.removeprefix("# Derived Property: ").strip() == section
        data, _, comment = line.partition("#")
        if not inside or ";" not in data:
            continue
        points, field = (part.strip() for part in data.split(";")[:2])
        if field in values:
            first, _, last = points.partition("..")
            found.append((int(first, 16), int(last or first, 16), " ".join(comment.split())))
    return found


def header(path: Path) -> list[str]:
    """The file's opening comment lines that name it, its version, date and copyright."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines()[:12]:
        if line.startswith("#") and re.search(r"\.txt|Version|Date|©", line):
            lines.append(line.lstrip("# ").strip())
    return lines


def unicode_data(path: Path) -> tuple[dict[int, str], dict[int, list[int]]]:
    """Names and decompositions (canonical and compatibility, tags dropped) from UnicodeData.txt."""
    names, decompositions = {}, {}
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split(";")
        point, name = int(fields[0], 16), fields[1]
        if name.startswith("<"):
            continue  # ranges (<CJK Ideograph, First>) and controls: no angle among them
        names[point] = name
        parts = [part for part in fields[5].split() if not part.startswith("<")]
        if parts:
            decompositions[point] = [int(part, 16) for part in parts]
    return names, decompositions


def confusables(path: Path) -> dict[int, list[int]]:
    """Each source character of confusables.txt and its prototype (what UTS #39 says it looks like)."""
    table = {}
    for line in path.read_text(encoding="utf-8-sig").splitlines():
        data = line.partition("#")[0]
        if data.count(";") >= 2:
            source, target = data.split(";")[:2]
            table[int(source, 16)] = [int(part, 16) for part in target.split()]
    return table


def name_reading(name: str) -> str:
    """The brackets a character named ``name`` is drawn as: their direction, and how many (DOUBLE, TRIPLE, MUCH)."""
    first = min((name.find(word), bracket) for word, bracket in (("LEFT", "<"), ("RIGHT", ">"), ("LESS-THAN", "<"),
                                                                 ("GREATER-THAN", ">")) if word in name)[1]
    count = 3 if re.search(r"TRIPLE|VERY MUCH", name) else 2 if re.search(r"DOUBLE (?:ANGLE|NESTED)|MUCH", name) else 1
    return first * count


def angle_readings(names: dict[int, str], decompositions: dict[int, list[int]],
                   prototypes: dict[int, list[int]]) -> dict[int, tuple[str, str]]:
    """Every character a reader may take for angle brackets: ``{code point: (the brackets, why)}``.

    1. confusables.txt gives it a prototype holding ``<`` or ``>`` (UTS #39: it looks like them);
    2. its Unicode name calls it an angle bracket, an angle quotation mark, or a less-than or greater-than sign;
    3. its prototype, or its decomposition (NFKC: full-width, small, vertical forms), holds a character of 1-3.
    Repeated until nothing is added.
    """
    readings: dict[int, tuple[str, str]] = {ord(c): (c, "itself") for c in ANGLES}
    for point, target in prototypes.items():
        brackets = "".join(chr(t) for t in target if chr(t) in ANGLES)
        if brackets:
            readings[point] = (brackets, "confusables.txt")
    for point, name in names.items():
        if point not in readings and ANGLE_NAME.search(name):
            readings[point] = (name_reading(name), "its name")
    while True:
        added = {}
        for table, why in ((prototypes, "confusables.txt"), (decompositions, "decomposition")):
            for point, target in table.items():
                brackets = "".join(readings[t][0] for t in target if t in readings)
                if point not in readings and point not in added and brackets:
                    added[point] = (brackets, why)
        if not added:
            return readings
        readings.update(added)


def latin_readings(prototypes: dict[int, list[int]]) -> dict[int, str]:
    """Every non-ASCII character whose prototype in confusables.txt is one ASCII letter (Cyrillic "о" is "o",
    Greek "Τ" is "T", Cherokee "Ꮪ" is "S"): ``{code point: the letter}``."""
    return {point: chr(target[0]) for point, target in prototypes.items()
            if point > 0x7F and len(target) == 1 and chr(target[0]).isascii() and chr(target[0]).isalpha()}


def python_ranges(name: str, ranges: list[tuple[int, int, str]], comment: str) -> list[str]:
    lines = [f"# {comment}", f"{name}: tuple[tuple[int, int], ...] = ("]
    lines += [f"    (0x{first:04X}, 0x{last:04X}),  # {note}" for first, last, note in ranges]
    return lines + [")", ""]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="the folder holding " + ", ".join(FILES))
    folder = parser.parse_args(argv).folder
    paths = {name: folder / name for name in FILES}
    missing = [name for name, path in paths.items() if not path.is_file()]
    if missing:
        print(f"missing in {folder}: {', '.join(missing)}", file=sys.stderr)
        return 1
    version = re.search(r"(\d+\.\d+\.\d+)", header(paths["DerivedCoreProperties.txt"])[0]).group(1)
    ignorable = ranges_of(paths["DerivedCoreProperties.txt"], "Default_Ignorable_Code_Point",
                          section="Default_Ignorable_Code_Point")
    formats = ranges_of(paths["DerivedGeneralCategory.txt"], "Cf")
    marks = ranges_of(paths["DerivedGeneralCategory.txt"], {"Mn", "Me"})
    names, decompositions = unicode_data(paths["UnicodeData.txt"])
    prototypes = confusables(paths["confusables.txt"])
    readings = angle_readings(names, decompositions, prototypes)
    latin = latin_readings(prototypes)

    sources = []
    for name, path in paths.items():
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        sources += [f"    {name} (sha256 {digest}):"] + [f"        {line}" for line in header(path) or
                                                           [f"(no header: the {version} release of the others)"]]
    out = ['"""Unicode\'s own data for the memory\'s defences: the default-ignorable and format characters',
           "(which renderers do not show and models still read), the combining marks (drawn on the character",
           "before them), every character a reader may take for the angle brackets of a data-block marker, and",
           "every character that looks like one Latin letter (read as that letter by the summary check).",
           "",
           f"GENERATED by tools/make_unicode_data.py from Unicode {version}; do not edit by hand: run the tool on",
           "newer files instead. Sources (https://www.unicode.org/Public/ ucd/ and security/):",
           *sources,
           "",
           "The data is Unicode's, used under the Unicode License V3:",
           "",
           *("    " + line if line else "" for line in LICENCE.splitlines()),
           '"""',
           "",
           f'UNICODE_VERSION = "{version}"',
           ""]
    out += python_ranges("DEFAULT_IGNORABLE", ignorable,
                         "Default_Ignorable_Code_Point (DerivedCoreProperties.txt): tags, variation selectors, fillers, ...")
    out += python_ranges("FORMAT", formats, "General_Category=Cf, format characters (DerivedGeneralCategory.txt)")
    out += python_ranges("MARKS", marks, "General_Category=Mn or Me, non-spacing and enclosing marks (DerivedGeneralCategory.txt)")
    out += ["# Every character a reader may take for angle brackets, and the brackets it reads as: its prototype in",
            "# confusables.txt holds < or >, or its name calls it an angle bracket or a less-than or greater-than sign,",
            "# or its prototype or decomposition holds such a character (tools/make_unicode_data.py: angle_readings).",
            "ANGLE_READINGS: dict[str, str] = {"]
    out += [f'    "\\U{point:08x}": "{brackets}",  # {names.get(point, "a character of a named range")} ({why})'
            for point, (brackets, why) in sorted(readings.items())]
    out += ["}", "",
            "# Every non-ASCII character that confusables.txt says looks like one ASCII letter, and that letter",
            "# (tools/make_unicode_data.py: latin_readings).",
            "LATIN_READINGS: dict[str, str] = {"]
    out += [f'    "\\U{point:08x}": "{letter}",  # {names.get(point, "a character of a named range")}'
            for point, letter in sorted(latin.items())]
    out += ["}", ""]
    OUTPUT.write_text("\n".join(out), encoding="utf-8")
    print(f"wrote {OUTPUT} (Unicode {version}: {sum(b - a + 1 for a, b, _ in ignorable)} default-ignorable, "
          f"{sum(b - a + 1 for a, b, _ in formats)} format, {sum(b - a + 1 for a, b, _ in marks)} marks, "
          f"{len(readings)} angle look-alikes, {len(latin)} Latin letter look-alikes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
