"""Defects blind race 34 found, each fixed at its cause."""
from __future__ import annotations

from pipeline.stages.hops import in_a_quoted_title, named_hops


def test_a_name_inside_a_quoted_title_names_the_work(ctx):
    """R19: *America the Beautiful*'s "Ward had originally written the music, "Materna", for the hymn "O
    Mother dear, Jerusalem" in 1882" was a hop to "the city that the sentence names": the racer went to
    Jerusalem and noted that the sentence names a hymn (the page links the hymn, not the city)."""
    sentence = ('Ward had originally written the music, "Materna", for the hymn "O Mother dear, Jerusalem" in '
                '1882, though it was not first published until 1892.')
    assert in_a_quoted_title(sentence, "Jerusalem") and not in_a_quoted_title(sentence, "Materna")
    assert not in_a_quoted_title('He sang "Georgia on My Mind" in Georgia.', "Georgia")   # named outside too
    assert "Jerusalem" not in {h.target for h in named_hops(ctx.page("America the Beautiful"), ctx)}
