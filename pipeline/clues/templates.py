"""Rendering a clue template of ``templates/clues/`` (jinja2): each clue kind's module renders its own
templates through ``render`` and keeps, beside the function, the patterns that read the wording back."""
from __future__ import annotations

from functools import lru_cache

import jinja2

from pipeline.catalog import TEMPLATES_DIR


@lru_cache(maxsize=2)
def _env(templates_dir: str) -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(templates_dir), undefined=jinja2.StrictUndefined,
                              autoescape=False, keep_trailing_newline=False)


def render(name: str, **kw) -> str:
    """``templates/clues/<name>`` rendered, its whitespace runs made single spaces."""
    return " ".join(_env(str(TEMPLATES_DIR / "clues")).get_template(name).render(**kw).split())
