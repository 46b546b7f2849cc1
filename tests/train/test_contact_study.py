"""The wheel-contact study tool: its table, its block in a docs page, its argument checks."""

import pytest

from traction.train import contact_study


def test_one_seed_climbs_the_easy_hill_with_both_contact_models(tmp_path, capsys):
    """Difficulty 0.5, seed 0: the scripted controller climbs with one ray and with the
    footprint (10 of 10 each in docs/results.md); the table goes to the page between the
    tool's markers, and a second run replaces it rather than adding another."""
    page = tmp_path / "results.md"
    page.write_text("# Results\n\nkept\n")
    argv = ["--seeds", "1", "--difficulties", "0.5", "--docs", str(page)]
    results = contact_study.main(argv)
    assert results == {("ray", 0.5): 1, ("footprint", 0.5): 1}
    contact_study.main(argv)
    text = page.read_text()
    assert text.startswith("# Results\n\nkept\n")
    assert text.count(contact_study.BEGIN) == 1 and text.count(contact_study.END) == 1
    assert "| footprint | 1 / 1 |" in text and "| ray | 1 / 1 |" in text
    assert "python -m traction.train.contact_study --seeds 1 --difficulties 0.5" in text
    assert "| footprint | 1 / 1 |" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [(["--seeds", "0"], "--seeds 0"),
                                           (["--difficulties", "1.5"], "--difficulties 1.5")])
def test_bad_arguments_are_named(argv, message, capsys):
    with pytest.raises(SystemExit):
        contact_study.main(argv)
    assert message in capsys.readouterr().err
