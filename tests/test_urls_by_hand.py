"""URL identity for page-visit scoring, case by case (the cases benchmarks/mutation.py found no
test for): hosts, bare titles, MediaWiki's index.php, and every answer a redirect resolver gives."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from pipeline.scoring.urls import _host, page_key, same_page


@pytest.mark.parametrize("url, key", [
    ("https://en.wikipedia.org/wiki/Ankara", "wiki:Ankara"),
    ("//en.wikipedia.org/wiki/ankara", "wiki:Ankara"),                    # scheme-relative, first letter
    ("en.wikipedia.org/wiki/Ankara", "wiki:Ankara"),                      # no scheme
    ("Ankara#History", "wiki:Ankara"),                                     # a bare title
    ("ankara", "wiki:Ankara"),
    ("a/b", "wiki:A/b"),                                                   # a title with a slash, no host
    ("x.y/z", "x.y/z"),                                                    # a host without a scheme
    ("", "wiki:"),
    (None, "wiki:"),
    ("https://user@www.example.com:8080/a/b/", "example.com/a/b"),
    ("https://example.com/a/b?x=1", "example.com/a/b"),
    ("https://de.m.wikivoyage.org/wiki/Berlin", "wikivoyage.org:Berlin"),  # a wiki that is not Wikipedia
    ("https://www.example.co.uk/", "example.co.uk"),
    ("https://en.wikipedia.org/w/index.php?title=Foo_bar", "wiki:Foo bar"),
    ("https://en.wikipedia.org/w/index.php/", "wikipedia.org/w/index.php"),   # index.php without a title
    ("https://mobile.example.org/p", "example.org/p"),
    ("https://zh-hans.wikipedia.org/wiki/X", "wiki:X"),
    ("https://abcd.example.org/p", "abcd.example.org/p"),                  # four letters: not a language
    ("https://a.example.org/p", "a.example.org/p"),                        # one letter: not a language
    ("https://m.org/p", "m.org/p"),                                        # a two-part host keeps both parts
    ("St. Louis#a/b", "wiki:St. Louis"),                                   # a slash in the fragment only
    ("x/y.z", "wiki:X/y.z"),                                               # a dot after the first slash only
    ("https://en.wikipedia.org/wiki/A/wiki/B", "wiki:A/wiki/B"),          # the first /wiki/ starts the title
    ("https://en.wikipedia.org/w/index.php/?title=Foo", "wiki:Foo"),       # index.php/ with a title
    ("https://example.org/w/index.phpX?title=Foo", "example.org/w/index.phpX"),
    ("https://example.org/ABX", "example.org/ABX"),
])
def test_page_keys(url, key):
    assert page_key(url) == key


def test_hosts():
    assert _host("www.m.en.example.org") == "example.org"
    assert _host("EN.Example.ORG") == "example.org"
    assert _host("user@x.y:1") == "x.y"
    assert _host("m.org") == "m.org"


@pytest.mark.parametrize("answer, key", [
    ("Türkiye", "wiki:Türkiye"),
    ("türkiye", "wiki:Türkiye"),                                    # a resolved name is canonical too
    (SimpleNamespace(title="türkiye"), "wiki:Türkiye"),
    ({"title": "türkiye"}, "wiki:Türkiye"),
    ({"name": "x"}, "wiki:Turkey"),                                 # no title: not redirected
    (SimpleNamespace(title=""), "wiki:Turkey"),
    (None, "wiki:Turkey"),
])
def test_redirects_through_a_resolver(answer, key):
    asked = []

    def resolve(title):
        asked.append(title)
        return answer
    assert page_key("https://en.wikipedia.org/wiki/turkey", resolve) == key
    assert page_key("turkey", resolve) == key
    assert asked == ["Turkey", "Turkey"]


def test_same_page_resolves_both_sides():
    resolve = {"Old": "New"}.get
    assert same_page("Old", "https://en.wikipedia.org/wiki/New", resolve)
    assert same_page("https://en.wikipedia.org/wiki/New", "old", resolve)
    assert not same_page("Old", "New")


def test_a_resolver_that_fails_leaves_the_title():
    def resolve(title):
        raise LookupError(title)
    assert page_key("Turkey", resolve) == "wiki:Turkey"
    assert same_page("Turkey", "https://en.wikipedia.org/wiki/Turkey", resolve)
    assert not same_page("Turkey", "Ankara", resolve)
