"""Defects blind race 53 (benchmarks/blind_race/race-373737) found, each checked where it was fixed."""
from __future__ import annotations

LESSER_SUNDA = ("The Lesser Sunda Islands, now known as Nusa Tenggara Islands in Indonesia, is an archipelago in the "
                "Indonesian archipelago and Timor Leste.")


def test_a_country_hop_sees_every_country_the_sentence_names_however_spelt(ctx):
    """R13: clue 5 asked the second of the two countries this sentence names (Timor-Leste, written "Timor Leste"),
    then clue 8 went "to the page of the country that the first sentence of its opening text names": Indonesia to
    the generator, which looked for pages by their titles ("Timor-Leste" is not "Timor Leste"), either to a reader.
    A country hop is doubtful wherever the sentence names another country, by any name the country data knows."""
    from pipeline.execute import countries_named, country_known
    from pipeline.stages.hops import _country_doubt, hops_from
    assert countries_named(LESSER_SUNDA, country_known) == ["Indonesia", "Timor Leste"]
    assert _country_doubt(LESSER_SUNDA, "Indonesia", "country")
    assert not _country_doubt("The archipelago lies in the Indonesian part of the Java Sea, in Indonesia.", "Indonesia",
                              "country")
    assert not any(h.target == "Indonesia" and h.relation.kind == "named" for h in hops_from("Lesser Sunda Islands", ctx))
