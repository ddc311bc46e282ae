"""The set-up check reports every check and never raises."""
from helpers.setup import environment_check


def test_all_checks_pass_here_and_the_tokenizer_matches_the_lesson():
    checks = environment_check.run_checks()
    assert all(check.ok for check in checks), environment_check.report(checks)
    assert "82 tokens (the lesson publishes 82)" in environment_check.check_tokenizer().detail


def test_model_mode_names_the_offline_stand_in_under_tests():
    assert environment_check.model_mode().detail.startswith("Model: offline")


def test_a_failed_check_is_reported_not_raised():
    failing = environment_check.Check("thing", False, "missing: do this")
    assert environment_check.report([failing]).endswith("1 check(s) failed: see FAIL above.")
    assert failing.line() == "[FAIL] thing: missing: do this"


def test_a_missing_package_or_another_version_fails_with_what_to_run():
    from importlib import metadata

    missing = environment_check.check_package("no-such-package-for-this-test", None)
    assert not missing.ok and missing.detail.endswith("pip install -r requirements.txt")
    installed = metadata.version("openai")
    assert environment_check.check_package("openai", installed).ok
    other = environment_check.check_package("openai", installed + ".1", "requirements-hosted.txt")
    assert not other.ok and f"requirements-hosted.txt pins {installed}.1" in other.detail
