"""The defect blind race 51 (benchmarks/blind_race/race-353535) found, checked where it was fixed."""
from __future__ import annotations

ANGOLA = ("With the support of the United States, Zaïre and South Africa intervened militarily in favour of the "
          "FNLA and UNITA with the intention of taking Luanda before the declaration of independence.")


def test_a_country_like_name_with_accents_is_one(ctx):
    """R15: Angola's sentence "With the support of the United States, Zaïre and South Africa intervened ..." was
    asked as naming two countries; the racer counted three. Zaire is a former state (``COUNTRY_LIKE``: a
    sentence naming one asks for no country), but the list's "Zaire" missed the page's "Zaïre"."""
    from pipeline.execute import country_known, country_like_inside, is_country_like, read_countries
    assert is_country_like("Zaïre") and is_country_like("Zaire") and not is_country_like("Zambia")
    assert country_like_inside(ANGOLA) == ["Zaïre"]
    assert read_countries(ANGOLA, country_known) is None
    assert read_countries(ANGOLA.replace("Zaïre", "Zambia"), country_known) == ("United States", "Zambia", "South Africa")
