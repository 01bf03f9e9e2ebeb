"""Every option of every ``cnb`` command says what it is for (``--help`` shows it)."""

from __future__ import annotations

import argparse

from clusterednb.cli.parser import build_parser


def _parsers(parser: argparse.ArgumentParser, path: str = "cnb"):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{path} {name}")


def test_every_option_has_a_help_text():
    missing = [
        f"{path} {'/'.join(action.option_strings) or action.dest}"
        for path, parser in _parsers(build_parser())
        for action in parser._actions
        if not isinstance(action, argparse._SubParsersAction | argparse._HelpAction)
        and action.help != argparse.SUPPRESS
        and not (action.help or "").strip()
    ]
    assert missing == []


def test_every_command_has_a_help_text():
    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                assert (choice.help or "").strip(), choice.dest
