"""mwparserfromhell's tree builder (``parser/builder.py``) in a third of its time.

Its tokenizer is C, its builder Python, and most of the builder's time is overhead: an ``isinstance``
chain per token, and node constructors that go through property setters, each calling
``parse_anything`` (which runs four imports per call). ``build`` reads the same tokens by the same
rules and sets the attributes of the common nodes (text, wikilinks, tags, templates and their
parameters, ``Wikicode``) as their constructors would; the rarer ones are made by their constructors.
tests/test_snapshot_importers.py (every real article) and test_snapshot_wikitext.py (garbled text)
check that its trees equal ``Builder``'s, attribute by attribute.
"""
from __future__ import annotations

from mwparserfromhell.nodes import Argument, Comment, ExternalLink, Heading, HTMLEntity, Tag, Template, Text, Wikilink
from mwparserfromhell.nodes.extras import Attribute, Parameter
from mwparserfromhell.parser import ParserError, tokens
from mwparserfromhell.smart_list import SmartList
from mwparserfromhell.wikicode import Wikicode

_new = object.__new__
_TextToken = tokens.Text


def _code(nodes: list) -> Wikicode:
    """``Wikicode(SmartList(nodes))``."""
    code = _new(Wikicode)
    code._nodes = SmartList(nodes)
    return code


def _text(value: str) -> Text:
    node = _new(Text)
    node._value = value
    return node


def _until(toks: list, stops: frozenset, nodes: list, owner: str):
    """Build nodes into ``nodes`` from the (reversed) tokens up to the first of a type in ``stops``,
    and return that token (errors name ``owner``, the method of ``Builder`` that would raise them)."""
    while toks:
        tok = toks.pop()
        cls = type(tok)
        if cls is _TextToken:
            nodes.append(_text(tok["text"]))
        elif cls in stops:
            return tok
        else:
            nodes.append(_node(toks, tok))
    raise ParserError(f"{owner}() missed a close token")


def _node(toks: list, tok):
    try:
        handler = _HANDLERS[type(tok)]
    except KeyError:
        raise ParserError(f"_handle_token() got unexpected {type(tok).__name__}") from None
    return handler(toks, tok)


def _wikilink(toks: list, tok) -> Wikilink:
    title = None
    nodes: list = []
    while type(_until(toks, _WIKILINK_STOPS, nodes, "_handle_wikilink")) is tokens.WikilinkSeparator:
        title, nodes = _code(nodes), []
    node = _new(Wikilink)
    if title is None:
        node._title, node._text = _code(nodes), None
    else:
        node._title, node._text = title, _code(nodes)
    return node


def _template(toks: list, tok) -> Template:
    nodes: list = []
    end = _until(toks, _TEMPLATE_STOPS, nodes, "_handle_template")
    name = _code(nodes)
    params = []
    default = 1
    while type(end) is tokens.TemplateParamSeparator:
        param, end = _parameter(toks, default)
        params.append(param)
        if not param._showkey:
            default += 1
    node = _new(Template)
    node._name = name
    node._params = params
    return node


def _parameter(toks: list, default: int) -> tuple[Parameter, object]:
    """The parameter after a separator, and the separator or close token after it."""
    key = None
    nodes: list = []
    while type(end := _until(toks, _PARAMETER_STOPS, nodes, "_handle_parameter")) is tokens.TemplateParamEquals:
        key, nodes = _code(nodes), []
    param = _new(Parameter)
    param._name = key if key is not None else _code([_text(str(default))])
    param._value = _code(nodes)
    param._showkey = key is not None
    return param, end


def _argument(toks: list, tok) -> Argument:
    nodes: list = []
    name = None
    while type(_until(toks, _ARGUMENT_STOPS, nodes, "_handle_argument")) is tokens.ArgumentSeparator:
        name, nodes = _code(nodes), []
    return Argument(name, _code(nodes)) if name is not None else Argument(_code(nodes))


def _external_link(toks: list, tok) -> ExternalLink:
    brackets = tok.get("brackets")
    nodes: list = []
    url = suppress_space = None
    while type(end := _until(toks, _EXTERNAL_LINK_STOPS, nodes, "_handle_external_link")) \
            is tokens.ExternalLinkSeparator:
        url, nodes = _code(nodes), []
        suppress_space = end.get("suppress_space")
    if url is not None:
        return ExternalLink(url, _code(nodes), brackets=brackets, suppress_space=suppress_space is True)
    return ExternalLink(_code(nodes), brackets=brackets, suppress_space=suppress_space is True)


def _entity(toks: list, tok) -> HTMLEntity:
    tok = toks.pop()
    if type(tok) is tokens.HTMLEntityNumeric:
        tok = toks.pop()
        if type(tok) is tokens.HTMLEntityHex:
            text = toks.pop()
            toks.pop()
            return HTMLEntity(text.get("text"), named=False, hexadecimal=True, hex_char=tok.get("char"))
        toks.pop()
        return HTMLEntity(tok.get("text"), named=False, hexadecimal=False)
    toks.pop()
    return HTMLEntity(tok.get("text"), named=True, hexadecimal=False)


def _heading(toks: list, tok) -> Heading:
    nodes: list = []
    _until(toks, _HEADING_STOPS, nodes, "_handle_heading")
    title = _code(nodes)
    level = int(tok.get("level"))    # Heading.__init__ through its setters (its parse_anything imports 4 modules a call)
    if level < 1 or level > 6:
        raise ValueError(level)
    node = _new(Heading)
    node._title = title
    node._level = level
    return node


def _comment(toks: list, tok) -> Comment:
    nodes: list = []
    _until(toks, _COMMENT_STOPS, nodes, "_handle_comment")
    return Comment(_code(nodes))


def _attribute(toks: list, start) -> Attribute:
    name = quotes = None
    nodes: list = []
    while True:
        end = _until(toks, _ATTRIBUTE_STOPS, nodes, "_handle_attribute")
        cls = type(end)
        if cls is tokens.TagAttrEquals:
            name, nodes = _code(nodes), []
        elif cls is tokens.TagAttrQuote:
            quotes = end.get("char")
        else:
            toks.append(end)
            if name:
                value = _code(nodes)
            else:
                name, value = _code(nodes), None
            return Attribute(name, value, quotes, start.get("pad_first"), start.get("pad_before_eq"),
                             start.get("pad_after_eq"))


def _tag(toks: list, tok) -> Tag:
    wiki_markup, invalid = tok.get("wiki_markup"), tok.get("invalid") or False
    wiki_style_separator, closing_wiki_markup = None, wiki_markup
    attrs: list = []
    tag = contents = closing_tag = padding = None
    implicit = False
    nodes: list = []
    while True:
        end = _until(toks, _TAG_STOPS, nodes, "_handle_tag")
        cls = type(end)
        if cls is tokens.TagAttrStart:
            attrs.append(_attribute(toks, end))
        elif cls is tokens.TagCloseOpen:
            wiki_style_separator = end.get("wiki_markup")
            padding = end.get("padding") or ""
            tag, nodes = _code(nodes), []
        elif cls is tokens.TagOpenClose:
            closing_wiki_markup = end.get("wiki_markup")
            contents, nodes = _code(nodes), []
        else:
            break
    if cls is tokens.TagCloseSelfclose:
        closing_wiki_markup = end.get("wiki_markup")
        tag = _code(nodes)
        self_closing = True
        padding = end.get("padding") or ""
        implicit = end.get("implicit") or False
    else:
        self_closing = False
        closing_tag = _code(nodes)
    assert tag is not None
    assert padding is not None
    if padding and not padding.isspace():
        raise ValueError("padding must be entirely whitespace")
    # Tag.__init__ through its setters
    node = _new(Tag)
    node._tag = node._closing_tag = tag
    node._contents = contents if contents is not None else _code([])
    node._attrs = attrs
    node._wiki_markup = node._closing_wiki_markup = str(wiki_markup) if wiki_markup else None
    node._self_closing = self_closing
    node._invalid = bool(invalid)
    node._implicit = bool(implicit)
    node._padding = padding
    if closing_tag is not None:
        node._closing_tag = closing_tag
    node._wiki_style_separator = str(wiki_style_separator) if wiki_style_separator else None
    if closing_wiki_markup is not None:
        node._closing_wiki_markup = str(closing_wiki_markup) if closing_wiki_markup else None
    return node


_WIKILINK_STOPS = frozenset({tokens.WikilinkSeparator, tokens.WikilinkClose})
_TEMPLATE_STOPS = frozenset({tokens.TemplateParamSeparator, tokens.TemplateClose})
_PARAMETER_STOPS = frozenset({tokens.TemplateParamEquals, tokens.TemplateParamSeparator, tokens.TemplateClose})
_ARGUMENT_STOPS = frozenset({tokens.ArgumentSeparator, tokens.ArgumentClose})
_EXTERNAL_LINK_STOPS = frozenset({tokens.ExternalLinkSeparator, tokens.ExternalLinkClose})
_HEADING_STOPS = frozenset({tokens.HeadingEnd})
_COMMENT_STOPS = frozenset({tokens.CommentEnd})
_ATTRIBUTE_STOPS = frozenset({tokens.TagAttrEquals, tokens.TagAttrQuote, tokens.TagAttrStart, tokens.TagCloseOpen,
                              tokens.TagCloseSelfclose})
_TAG_STOPS = frozenset({tokens.TagAttrStart, tokens.TagCloseOpen, tokens.TagOpenClose, tokens.TagCloseSelfclose,
                        tokens.TagCloseClose})
_HANDLERS = {
    tokens.WikilinkOpen: _wikilink, tokens.TemplateOpen: _template, tokens.ArgumentOpen: _argument,
    tokens.ExternalLinkOpen: _external_link, tokens.HTMLEntityStart: _entity, tokens.HeadingStart: _heading,
    tokens.CommentStart: _comment, tokens.TagOpenOpen: _tag,
}


def build(toks: list) -> Wikicode:
    """``Builder().build(toks)``: the tree of a token list, which is used up."""
    toks.reverse()
    nodes: list = []
    while toks:
        tok = toks.pop()
        nodes.append(_text(tok["text"]) if type(tok) is _TextToken else _node(toks, tok))
    return _code(nodes)
