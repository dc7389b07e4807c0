"""The language model's Markdown as the formatting a chat shows: Telegram's HTML subset and Matrix's
`formatted_body`, with a plain-text twin for clients (and fallbacks) that show no markup. Pure functions; the
adapters' render steps call them for a model's answer only (our own texts are plain and keep their exact wording).

Bold, italics, strike-through, code, code blocks, lists, quotes and links are kept; everything else (headings,
tables, images, raw HTML) becomes plain text. The answer comes as top-level blocks, each complete HTML on its
own, so a message split between blocks never breaks the nesting."""

from __future__ import annotations

import html
from dataclasses import dataclass
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode

# Schemes a link may have; anything else (javascript:, data:, a relative path) stays as its text.
SAFE_SCHEMES = ("http://", "https://", "mailto:", "tg://")
BULLET = "•"
RULE = "———"


@dataclass(frozen=True)
class Block:
    """One top-level block of an answer in its three shapes; a list's `items` are its lines, each complete, to
    cut a list too long for one message between them."""

    plain: str
    telegram: str
    matrix: str
    items: tuple[Block, ...] = ()


@dataclass(frozen=True)
class _Inline:
    plain: str
    telegram: str
    matrix: str

    def __add__(self, other: _Inline) -> _Inline:
        return _Inline(self.plain + other.plain, self.telegram + other.telegram, self.matrix + other.matrix)


_EMPTY = _Inline("", "", "")


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # CommonMark without raw HTML (a tag the model writes is shown as text), with ~~strike-through~~.
    return MarkdownIt("commonmark", {"html": False}).enable("strikethrough")


def blocks(markdown: str) -> list[Block]:
    """The answer's top-level blocks, in order (an empty answer has none)."""
    tree = SyntaxTreeNode(_parser().parse(markdown))
    return [block for node in tree.children if (block := _block(node, depth=0)) is not None]


def telegram_html(markdown: str) -> str:
    return "\n\n".join(b.telegram for b in blocks(markdown))


def plain_text(markdown: str) -> str:
    return "\n\n".join(b.plain for b in blocks(markdown))


def matrix_html(markdown: str) -> str:
    return "".join(b.matrix for b in blocks(markdown))


def _escape(text: str) -> str:
    return html.escape(text, quote=False)


def _block(node: SyntaxTreeNode, depth: int) -> Block | None:
    kind = node.type
    if kind == "paragraph":
        inline = _inline_of(node)
        return Block(inline.plain, inline.telegram, f"<p>{inline.matrix}</p>")
    if kind == "heading":  # no headings in Telegram: bold in both, so the answer looks the same everywhere
        inline = _inline_of(node)
        return Block(inline.plain, f"<b>{inline.telegram}</b>", f"<p><strong>{inline.matrix}</strong></p>")
    if kind in ("bullet_list", "ordered_list"):
        return _list(node, depth)
    if kind in ("fence", "code_block"):
        code = node.content.rstrip("\n")
        language = node.info.split()[0] if kind == "fence" and node.info.strip() else ""
        attribute = f' class="language-{html.escape(language)}"' if language.isascii() and language.isprintable() \
            and language else ""
        pre = f"<pre><code{attribute}>{_escape(code)}</code></pre>"
        return Block(code, pre, pre)
    if kind == "blockquote":
        quoted = [b for child in node.children if (b := _block(child, depth)) is not None]
        plain = "\n".join("> " + line for b in quoted for line in b.plain.split("\n"))
        telegram = "\n".join(b.telegram for b in quoted)
        matrix = "".join(b.matrix for b in quoted)
        return Block(plain, f"<blockquote>{telegram}</blockquote>", f"<blockquote>{matrix}</blockquote>")
    if kind == "hr":
        return Block(RULE, RULE, "<hr>")
    if kind == "html_block":  # raw HTML is off: only reached if enabled; shown as the text it is
        text = node.content.rstrip("\n")
        return Block(text, _escape(text), f"<p>{_escape(text)}</p>")
    if node.children:  # anything the parser may add later: its text
        parts = [b for child in node.children if (b := _block(child, depth)) is not None]
        if parts:
            return Block("\n".join(b.plain for b in parts), "\n".join(b.telegram for b in parts),
                         "".join(b.matrix for b in parts))
    text = node.content.strip()
    return Block(text, _escape(text), f"<p>{_escape(text)}</p>") if text else None


def _list(node: SyntaxTreeNode, depth: int) -> Block:
    """Telegram has no list tags: its items are lines with a bullet or their number, nested ones indented."""
    ordered = node.type == "ordered_list"
    start = int(node.attrs.get("start", 1) or 1) if ordered else 1
    indent = "   " * depth
    plain_lines: list[str] = []
    telegram_lines: list[str] = []
    items: list[str] = []
    lines: list[Block] = []
    for number, item in enumerate(node.children, start=start):
        marker = f"{number}." if ordered else BULLET
        inner = [(child, b) for child in item.children if (b := _block(child, depth + 1)) is not None]
        plain = "\n".join(b.plain for _, b in inner)
        telegram = "\n".join(b.telegram for _, b in inner)
        plain_lines.append(f"{indent}{marker} {plain.lstrip()}")
        telegram_lines.append(f"{indent}{marker} {telegram.lstrip()}")
        lines.append(Block(plain_lines[-1], telegram_lines[-1], ""))
        # A tight list's paragraphs are hidden: Matrix shows an item's text without <p> around it.
        items.append("<li>" + "".join(_unwrap(b.matrix) if child.type == "paragraph" and child.hidden else b.matrix
                                      for child, b in inner) + "</li>")
    tag = "ol" if ordered else "ul"
    opening = f'<ol start="{start}">' if ordered and start != 1 else f"<{tag}>"
    return Block("\n".join(plain_lines), "\n".join(telegram_lines), opening + "".join(items) + f"</{tag}>",
                 tuple(lines))


def _unwrap(matrix: str) -> str:
    if matrix.startswith("<p>") and matrix.endswith("</p>"):
        return matrix[3:-4]
    return matrix


def _inline_of(node: SyntaxTreeNode) -> _Inline:
    result = _EMPTY
    for child in node.children:
        result = result + (_inlines(child.children) if child.type == "inline" else _inline(child))
    return result


def _inlines(nodes: list[SyntaxTreeNode]) -> _Inline:
    result = _EMPTY
    for child in nodes:
        result = result + _inline(child)
    return result


def _wrap(inner: _Inline, telegram: str, matrix: str) -> _Inline:
    return _Inline(inner.plain, f"<{telegram}>{inner.telegram}</{telegram}>", f"<{matrix}>{inner.matrix}</{matrix}>")


def _inline(node: SyntaxTreeNode) -> _Inline:
    kind = node.type
    if kind == "text":
        return _Inline(node.content, _escape(node.content), _escape(node.content))
    if kind in ("softbreak", "hardbreak"):
        return _Inline("\n", "\n", "<br>")
    if kind == "strong":
        return _wrap(_inlines(node.children), "b", "strong")
    if kind == "em":
        return _wrap(_inlines(node.children), "i", "em")
    if kind == "s":
        return _wrap(_inlines(node.children), "s", "del")
    if kind == "code_inline":
        code = _escape(node.content)
        return _Inline(node.content, f"<code>{code}</code>", f"<code>{code}</code>")
    if kind == "link":
        inner = _inlines(node.children)
        href = str(node.attrs.get("href", ""))
        if not href.lower().startswith(SAFE_SCHEMES):
            return inner
        target = html.escape(href, quote=True)
        plain = inner.plain if inner.plain in (href, href.removeprefix("mailto:")) else f"{inner.plain} ({href})"
        return _Inline(plain, f'<a href="{target}">{inner.telegram}</a>', f'<a href="{target}">{inner.matrix}</a>')
    if kind == "image":  # no pictures from the model's text: its description
        if node.children:
            return _inlines(node.children)
        alt = str(node.attrs.get("alt", ""))
        return _Inline(alt, _escape(alt), _escape(alt))
    if node.children:
        return _inlines(node.children)
    return _Inline(node.content, _escape(node.content), _escape(node.content))
