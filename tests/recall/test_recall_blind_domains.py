"""Recall quality on twenty-one more domains' blind sets (tests/data/BLIND_DOMAINS.md): a ledger
and questions written apart by helpers who never saw the code. Each file is held to the
figures docs/RECALL.md gives (measured once, after the rule was frozen: gameengine and clinic
in the first pass of issue 29, since tuned on like fintech; compiler, logistics and newsroom
in the second), one question of slack each, for lexical and semantic recall:
a change that trades answers for false alarms in another domain than the one it was tuned
on fails here."""

from __future__ import annotations

import sys

import pytest
from kit.model import model_dir  # noqa: F401  (the fixture: the test model, or a skip)
from kit.run import ROOT, TESTS

sys.path.insert(0, str(ROOT / "bench"))


DATA = TESTS / "data"
# domain -> engine -> (hit@5 hits of 50 answerable, correct abstentions of 20), as measured;
# the semantic figures of the first six raised where issue 29's fitted decision did better, and
# compiler's, edtech's and iot's where its fourth pass (the ledger's own forms of a word) did;
# its fifth pass (the decision refitted on all thirteen sets, with the seen share) raised
# clinic's, compiler's, genomics' and timeseries' and kept the higher of two figures where one
# fell (clinic and compiler refuse 16 of 20 now, fintech answers 42 of 50: docs/RECALL.md)
MEASURED = {
    "fintech": {"lexical": (43, 11), "semantic": (43, 17)},
    "gameengine": {"lexical": (39, 16), "semantic": (42, 16)},
    "clinic": {"lexical": (43, 16), "semantic": (43, 17)},
    # issue 29's second pass: written meanwhile by helpers who saw neither code nor entries,
    # opened once after the rule was committed and run once (docs/RECALL.md)
    "compiler": {"lexical": (48, 12), "semantic": (46, 17)},
    "logistics": {"lexical": (47, 14), "semantic": (50, 17)},
    "newsroom": {"lexical": (50, 14), "semantic": (49, 16)},
    # issue 29's third pass: written by helpers who saw neither code nor entries, opened once
    # after the fitted semantic decision was committed and run once (docs/RECALL.md)
    "edtech": {"lexical": (47, 19), "semantic": (48, 19)},
    "energy": {"lexical": (44, 17), "semantic": (48, 18)},
    "iot": {"lexical": (45, 17), "semantic": (47, 19)},
    # issue 29's fourth pass: written by helpers who saw neither code nor entries (topics by
    # one, the ledger by a second, the questions by a third), opened once after the rule of
    # the ledger's own word forms was committed, and run once (docs/RECALL.md)
    "timeseries": {"lexical": (39, 18), "semantic": (36, 20)},
    "airline": {"lexical": (44, 17), "semantic": (43, 18)},
    "genomics": {"lexical": (45, 18), "semantic": (45, 19)},
    # issue 29's fifth pass: written the same way, opened once after the refitted decision
    # (commit e8833ab, "seen share") was committed, and run once (docs/RECALL.md); the first
    # held-out sets whose near-misses broke abstention below 0.85 in both modes
    "transit": {"lexical": (35, 12), "semantic": (36, 14)},
    "claims": {"lexical": (43, 15), "semantic": (46, 16)},
    "groundstation": {"lexical": (45, 11), "semantic": (40, 15)},
    # issue 29's seventh pass: written the same way, opened once after its rule (commit
    # d28685d, a short word's plural and inflection) was committed, and run once; that rule
    # was then taken back (it cost fintech a held answer), so these are the figures of the
    # code without it, the sets' second run (docs/RECALL.md gives both)
    "pos": {"lexical": (40, 15), "semantic": (41, 13)},
    "ediscovery": {"lexical": (41, 12), "semantic": (45, 15)},
    "chipci": {"lexical": (40, 15), "semantic": (45, 18)},
    # issue 29's eighth pass: written the same way, opened once with the shipped code, then
    # run once more with that pass's rules, which were not shipped (they lost refusals here:
    # docs/RECALL.md); held to the shipped code's run. Their near misses name the products
    # the covered topics use: both engines refuse only 9-11 of 20 on payroll and hpc.
    "dispatch": {"lexical": (43, 17), "semantic": (48, 16)},
    "payroll": {"lexical": (47, 10), "semantic": (46, 11)},
    "hpc": {"lexical": (45, 9), "semantic": (48, 9)},
}


def measured(domain: str, model: str | None, blind_sets) -> dict:
    found = blind_sets(DATA / f"blind_{domain}", model)
    if model:
        assert found.ledger.recall("warm up", k=1) is not None and found.ledger.recall_mode[0] == "semantic"
    return found.report()


def held(report: dict, hits: int, abstentions: int) -> None:
    assert report["answerable"] == 50 and report["must_abstain"] == 20, report
    assert report["hit@5"] * 50 >= hits - 1 - 1e-6, (report["hit@5"], report["misses"])
    assert report["abstention"] * 20 >= abstentions - 1 - 1e-6, (report["abstention"], report["false_alarms"])


@pytest.mark.parametrize("domain", sorted(MEASURED))
def test_lexical_recall_holds_its_figures_in_each_blind_domain(domain, blind_sets):
    held(measured(domain, None, blind_sets), *MEASURED[domain]["lexical"])


@pytest.mark.parametrize("domain", sorted(MEASURED))
def test_semantic_recall_holds_its_figures_in_each_blind_domain(domain, blind_sets, model_dir):
    held(measured(domain, str(model_dir), blind_sets), *MEASURED[domain]["semantic"])
