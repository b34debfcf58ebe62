"""A measured difficulty for shell tasks: the simple commands and pipeline stages of a golden solution.

``measure(script)`` reads a bash script with a small lexer (quotes, ``$(...)`` and backticks,
here-documents; no evaluation) and counts:

  commands   simple commands in command position (``find``, ``awk``, ``[``, ``kill``...), those inside
             ``$(...)``, backticks and ``(...)`` included, and those of a here-document that holds a
             shell script (``#!/bin/bash`` or ``#!/bin/sh``: the body of a command the solution writes);
             reserved words (``for``, ``do``, ``if``...), bare assignments and the no-op builtins
             (``true``, ``:``, ``break``, ``continue``) are not commands; an awk program is one command
  stages     the longest pipeline (commands joined by ``|``)
  lines      non-blank, non-comment lines of the script

``level(commands)`` bins the command count into the task's ``difficulty`` (1-5):
1 command -> 1, 2 -> 2, 3-4 -> 3, 5-7 -> 4, 8 or more -> 5.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

RESERVED = {"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac", "in",
            "function", "{", "}", "!", "[[", "]]", "select", "time"}
NO_OPS = {"true", ":", "break", "continue"}
LEVEL_BOUNDS = ((1, 1), (2, 2), (4, 3), (7, 4))     # (most commands, level); above the last: 5
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")


@dataclass(frozen=True)
class Measure:
    commands: int
    stages: int
    lines: int

    def as_dict(self) -> dict:
        return {"commands": self.commands, "stages": self.stages, "lines": self.lines}


def level(commands: int) -> int:
    for most, lvl in LEVEL_BOUNDS:
        if commands <= most:
            return lvl
    return 5


def _split_heredocs(script: str) -> tuple[str, list[str]]:
    """The script with here-document bodies removed, and the bodies."""
    out, bodies = [], []
    lines = script.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        for m in _HEREDOC.finditer(line):
            body = []
            while i < len(lines) and lines[i].strip() != m.group(2):
                body.append(lines[i])
                i += 1
            i += 1          # the closing delimiter
            bodies.append("\n".join(body))
    return "\n".join(out), bodies


class _Counter:
    def __init__(self) -> None:
        self.commands = 0
        self.stages = 0
        self.shape: list[str] = []     # each command with its options, in order (``plan_shape``)

    def scan(self, text: str) -> None:
        """Count the commands of ``text`` (no here-documents left in it)."""
        i, n = 0, len(text)
        expect_command = True       # the next word starts a command
        skip_words = False          # inside ``for x in ...`` up to the separator
        pipeline = 0
        word = ""

        redirect = False            # the next word is a redirection's target
        runs_command = False        # the next non-option word is a command (after find -exec, xargs)

        def end_word() -> None:
            nonlocal word, expect_command, skip_words, pipeline, redirect, runs_command
            if not word:
                return
            w, word = word, ""
            if redirect:
                redirect = False
                return
            if skip_words:
                return
            if not expect_command:
                if w.startswith("-") and self.shape and len(w) < 12:
                    self.shape[-1] += " " + re.sub(r"\d+", "N", w.split("=")[0])
                    runs_command = runs_command or w in ("-exec", "-execdir", "-ok")
                elif runs_command:
                    runs_command = False
                    self.shape.append(w.rsplit("/", 1)[-1])
                    self.commands += 1
                return
            if w in ("for", "select", "case"):
                skip_words = True
                return
            if w in RESERVED or _ASSIGNMENT.match(w):
                return
            expect_command = False
            if w not in NO_OPS:
                self.shape.append(w.rsplit("/", 1)[-1])
                self.commands += 1
                pipeline += 1
                self.stages = max(self.stages, pipeline)
                runs_command = w == "xargs"

        def separator(pipe: bool) -> None:
            nonlocal expect_command, skip_words, pipeline, runs_command
            end_word()
            expect_command, skip_words, runs_command = True, False, False
            if not pipe:
                pipeline = 0

        while i < n:
            c = text[i]
            if c == "\\" and i + 1 < n:
                word += text[i:i + 2]
                i += 2
                continue
            if c == "'":
                j = text.find("'", i + 1)
                j = n - 1 if j < 0 else j
                word += text[i:j + 1]
                i = j + 1
                continue
            if c == '"':
                j, inner = i + 1, []
                while j < n and text[j] != '"':
                    if text[j] == "\\":
                        j += 2
                        continue
                    if text.startswith("$(", j) and not text.startswith("$((", j):
                        k = self._matching(text, j + 1)
                        inner.append(text[j + 2:k])
                        j = k + 1
                        continue
                    if text[j] == "`":
                        k = text.find("`", j + 1)
                        k = n if k < 0 else k
                        inner.append(text[j + 1:k])
                        j = k + 1
                        continue
                    j += 1
                word += "Q"
                i = j + 1
                for sub in inner:
                    self._nested(sub)
                continue
            if text.startswith("$((", i):
                k = self._matching(text, i + 2)
                k = self._matching(text, i + 1) if k + 1 < n and text[k + 1] == ")" else k
                word += "N"
                i = k + 2 if k + 1 < n and text[k + 1] == ")" else k + 1
                continue
            if text.startswith("$(", i):
                k = self._matching(text, i + 1)
                self._nested(text[i + 2:k])
                word += "S"
                i = k + 1
                continue
            if c == "`":
                k = text.find("`", i + 1)
                k = n if k < 0 else k
                self._nested(text[i + 1:k])
                word += "S"
                i = k + 1
                continue
            if c == "#" and not word:
                j = text.find("\n", i)
                i = n if j < 0 else j
                continue
            if c in "<>" and text.startswith("(", i + 1):          # process substitution
                k = self._matching(text, i + 1)
                self._nested(text[i + 2:k])
                word += "P"
                i = k + 1
                continue
            if text.startswith("&&", i) or text.startswith("||", i):
                separator(pipe=False)
                i += 2
                continue
            if c == "|":
                separator(pipe=True)
                i += 1
                continue
            if c in ";\n&(){}":
                if c in "{}" and (word or (i + 1 < n and text[i + 1] not in " \t\n;")):
                    word += c       # ${var}, {a,b}: part of a word
                    i += 1
                    continue
                if c == "&" and text.startswith(">", i + 1):
                    end_word()      # &> file: the redirection follows
                    i += 1
                    continue
                if c == ")" and skip_words:
                    end_word()
                    i += 1
                    continue
                separator(pipe=False)
                i += 1
                continue
            if c in " \t":
                end_word()
                i += 1
                continue
            if c in "<>":
                # a redirection (2>, >>, <<, <<<, >&): its target is the next word, never a command
                if word.isdigit():
                    word = ""
                else:
                    end_word()
                while i < n and text[i] in "<>":
                    i += 1
                if i < n and text[i] == "&":
                    i += 1
                redirect = True
                continue
            word += c
            i += 1
        end_word()

    def _nested(self, text: str) -> None:
        saved = self.stages
        self.scan(text)
        self.stages = max(saved, self.stages)

    @staticmethod
    def _matching(text: str, open_at: int) -> int:
        """Index of the ``)`` matching the ``(`` at ``open_at`` (quotes respected)."""
        depth, i, n = 0, open_at, len(text)
        while i < n:
            c = text[i]
            if c == "\\":
                i += 2
                continue
            if c == "'":
                j = text.find("'", i + 1)
                i = n if j < 0 else j + 1
                continue
            if c == '"':
                j = i + 1
                while j < n and text[j] != '"':
                    j += 2 if text[j] == "\\" else 1
                i = j + 1
                continue
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    return i
            i += 1
        return n - 1


def _scan(script: str) -> _Counter:
    main, bodies = _split_heredocs(script)
    counter = _Counter()
    counter.scan(main)
    for body in bodies:
        first = body.lstrip().split("\n", 1)[0]
        if first.startswith("#!") and re.search(r"/(ba)?sh\b", first):
            counter._nested(body)
    return counter


def plan_shape(script: str) -> str:
    """The golden solution with its data taken out: its commands and their options, in order
    (``find -type -name | wc -l``), so two solutions that differ only in paths, names and numbers
    have one shape."""
    return " ; ".join(_scan(script).shape)


def measure(script: str) -> Measure:
    counter = _scan(script)
    lines = sum(1 for line in script.split("\n") if line.strip() and not line.strip().startswith("#"))
    return Measure(counter.commands, max(counter.stages, 1 if counter.commands else 0), lines)
