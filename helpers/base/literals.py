"""Exact gates for regular expressions: the literals a pattern cannot match without, read from its parse (a text that
lacks them holds no match, so its search can be left out), and a look at the first characters of its alternatives."""
from __future__ import annotations

import itertools
import re
import re._constants as _sre
import re._parser as _sre_parse
from collections.abc import Callable, Iterable

Needs = tuple[tuple[str, ...], ...]


def needs(source: str) -> Needs:
    """What every match of ``source`` (no flags) holds: groups of literals, one of each group in the match, read
    from its parse (runs of literal characters; of an alternation, one group of each branch joined; of a part
    repeated at least once, its own)."""
    def read(items: Iterable[tuple[object, object]]) -> list[tuple[str, ...]]:
        found, run = [], ""
        for op, av in items:
            if op is _sre.LITERAL:
                run += chr(av)
                continue
            found, run = found + [(run,)] * bool(run), ""
            if op is _sre.SUBPATTERN and not av[1] and not av[2]:  # (group, flags added, flags removed, items)
                found += read(av[3])
            elif op is _sre.ATOMIC_GROUP:
                found += read(av)
            elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT) and av[0] >= 1:
                found += read(av[2])
            elif op is _sre.BRANCH:
                each = [max(read(branch), key=lambda group: min(map(len, group)), default=None) for branch in av[1]]
                found += [tuple(dict.fromkeys(itertools.chain(*each)))] if all(each) else []
        return found + [(run,)] * bool(run)
    # looked for in this order: the groups of fewest literals, of the longest (the rarest) first
    return tuple(sorted(read(_sre_parse.parse(source)), key=lambda group: (len(group), -min(map(len, group)))))


def gate(source: str) -> Callable[[str], bool]:
    """Whether a text may hold a match of ``source``: it holds one literal of each group it ``needs`` (of a group,
    a literal that holds another is left out: the other is in every text it is in)."""
    groups = [tuple(literal for literal in group if not any(other != literal and other in literal for other in group))
              for group in dict.fromkeys(needs(source))]
    return lambda text: all(any(literal in text for literal in group) for group in groups)


def first_look(texts: Iterable[str]) -> str:
    """A look ahead at the first characters of ``texts`` (none blank): the engine passes at once over a place where
    none starts."""
    return f"(?=[{re.escape(''.join(sorted({text[0] for text in texts})))}])"
