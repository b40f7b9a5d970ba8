"""The bounded slice of the fuzz beyond `simulate`: hostile chunk files, docstores,
Parquet files, state files, --chunking objects, question files, model replies and embedding vectors
through their readers (tests/fuzz_surfaces.py), the same seeds every run, so a failure names the
surface and seed that reproduce it (`python tests/fuzz_long.py --surface S --seed N --count 1`).

The fast lane runs 40 inputs of each surface (a few seconds); the slow one 1,000 of each and 20
runs of `python -m ragsim` itself. tests/fuzz_long.py runs 50,000.
"""

import fuzz_requests
import fuzz_surfaces
import pytest


def campaign(surface: str, seeds: range) -> dict:
    failures, kinds = [], {"response": 0, "error": 0}
    for seed in seeds:
        try:
            kinds[fuzz_surfaces.run(surface, seed)] += 1
        except (Exception, fuzz_requests.Hang) as e:  # noqa: BLE001  (malformed, a hang, anything that escaped)
            failures.append(f"--surface {surface} --seed {seed}: {type(e).__name__}: {str(e)[:300]}")
    assert not failures, failures[:5]
    return kinds


@pytest.mark.parametrize("surface", fuzz_surfaces.IN_PROCESS)
def test_a_slice_of_each_surface_is_answered_or_refused(surface):
    campaign(surface, range(40))


@pytest.mark.slow
@pytest.mark.parametrize("surface", fuzz_surfaces.IN_PROCESS)
def test_a_thousand_of_each_surface_are_answered_or_refused_and_both_kinds_are_reached(surface):
    kinds = campaign(surface, range(40, 1040))
    assert kinds["response"] > 50 and kinds["error"] > 50, kinds


@pytest.mark.slow
def test_the_command_line_answers_hostile_files_with_a_sentence_and_no_traceback():
    kinds = campaign("cli", range(20))
    assert kinds["response"] and kinds["error"], kinds
