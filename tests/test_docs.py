"""Everything a user or an agent can call or choose is documented (as datasette's tests check its plugin hooks and
settings): every MCP tool the server lists with each of its arguments, every ``limbic`` command and sub-command (the
argparse parser of :mod:`limbic.core.cli.main`, walked) and each of its options, and every decay model with its
parameters, in docs/*.md or README.md.

What counts as documented, read from the Markdown: a *block* is a paragraph, a list item, a table row or one line
of a code block; a tool is documented where a code span names it (`` `search_semantic` `` or
`` `search_semantic(query, …)` ``), an argument where a code span of such a block names it; a command where a code
span or code line writes it (``limbic mcp token add NAME``, ``limbic --db DB model list | verify | remove NAME``:
``limbic`` then its words in order) without going on to one of its own sub-commands, an option where a code span
of such a block names it. A seed alias (``find_split_candidates_tool``) has its tool's arguments. A decay model is
documented as a tool is, its parameters as its arguments.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

import anyio

from limbic.core.cli.main import build_parser
from limbic.core.mcp.profiles import PROFILES
from limbic.core.mcp.server import build_server
from limbic.core.search.decay import MODELS
from limbic.core.service import MemoryService

ROOT = Path(__file__).resolve().parents[1]
SPAN = re.compile(r"`([^`]+)`")
ITEM = re.compile(r"\s*(?:[-*]|\d+\.)\s|\s*\|")


def _blocks() -> list[list[str]]:
    """Each block of docs/*.md and README.md as its code units: its code spans, or the code line itself."""
    blocks: list[list[str]] = []
    for path in [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]:
        paragraphs: list[list[str]] = [[]]  # the lines of each paragraph, list item or table row
        fenced = False
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.lstrip().startswith("```"):
                fenced = not fenced
                paragraphs.append([])
            elif fenced or (line.startswith("    ") and not paragraphs[-1] and line.strip()):
                blocks.append([line])
            elif not line.strip() or ITEM.match(line):
                paragraphs.append([line] if line.strip() else [])
            else:
                paragraphs[-1].append(line)
        blocks += [SPAN.findall("\n".join(lines)) for lines in paragraphs if lines]
    return blocks


BLOCKS = _blocks()


def _word(word: str) -> str:
    return rf"(?<![\w-]){re.escape(word)}(?![\w-])"


def _has(word: str, unit: str) -> bool:
    return re.search(_word(word), unit) is not None


def _undocumented(things: dict[str, list[str]], what: str) -> list[str]:
    """What of ``things`` (a name and its arguments) no block documents."""
    missing = []
    for name, arguments in things.items():
        about = [block for block in BLOCKS if any(_has(name, unit) for unit in block)]
        if not about:
            missing.append(f"{what} {name}")
        missing += [f"{what} {name}: argument {argument}" for argument in arguments
                    if about and not any(_has(argument, unit) for block in about for unit in block)]
    return missing


# --- MCP ---------------------------------------------------------------------------------------------------------

def _listed_tools(tmp_path: Path) -> dict[str, dict]:
    """Every tool some profile lists, with its input schema."""
    service = MemoryService.open(str(tmp_path / "docs.db"), embedder=None, origin="mcp")
    try:
        return {tool.name: tool.input_schema for name in PROFILES
                for tool in anyio.run(build_server(service, tools=name).list_tools)}
    finally:
        service.close()


def test_every_mcp_tool_and_argument_is_documented(tmp_path):
    tools = _listed_tools(tmp_path)
    # a seed alias (``…_tool``) takes its tool's arguments, which the tool's own entries document
    missing = _undocumented({name: [] if name.removesuffix("_tool") in tools.keys() - {name}
                             else list(schema.get("properties", {})) for name, schema in tools.items()}, "MCP tool")
    assert not missing, "undocumented in docs/*.md:\n" + "\n".join(missing)


def test_every_decay_model_and_parameter_is_documented():
    missing = _undocumented({name: [p.name for p in model.parameters] for name, model in MODELS.items()},
                            "decay model")
    assert not missing, "undocumented in docs/*.md:\n" + "\n".join(missing)


# --- CLI ---------------------------------------------------------------------------------------------------------

def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], list[list[str]], list[str]]]:
    """``(path, option strings of each option, sub-command names)`` of ``parser`` and of every sub-command under it."""
    subcommands: dict[int, tuple[str, argparse.ArgumentParser]] = {}
    options = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                subcommands.setdefault(id(sub), (name, sub))
        elif action.option_strings and action.dest != "help":
            options.append(list(action.option_strings))
    yield path, options, [name for name, _ in subcommands.values()]
    for name, sub in subcommands.values():
        yield from _commands(sub, (*path, name))


def _writes(path: tuple[str, ...], unit: str) -> bool:
    """Whether the code ``unit`` writes the command ``path``: ``limbic`` and then each of its words, in order."""
    return re.search(".*?".join(_word(word) for word in path), unit) is not None


def test_every_cli_command_and_option_is_documented():
    missing = []
    for path, options, subcommands in _commands(build_parser(), ("limbic",)):
        about = [block for block in BLOCKS if any(
            _writes(path, unit) and not any(_writes((*path, sub), unit) for sub in subcommands) for unit in block)]
        if subcommands and not options:
            continue  # a group (``limbic model``): documented by its sub-commands
        if not about:
            missing.append(f"command {' '.join(path)}")
            continue
        missing += [f"option {' '.join(path)} {'/'.join(strings)}" for strings in options
                    if not any(_has(s, unit) for s in strings for block in about for unit in block)]
    assert not missing, "undocumented in docs/*.md or README.md:\n" + "\n".join(missing)
