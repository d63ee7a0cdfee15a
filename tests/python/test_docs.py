"""Every fenced code block of README.md and docs/ runs, and what the docs say it prints is what it prints.

Each Markdown file is a session: its blocks run top to bottom in one temporary folder (with
`examples/`, `experiments/`, `benches/` and `tests/` of the repository linked in, so paths
relative to the repository root work), `aiccsim` (the binary cargo built) and the venv's
`python` first on PATH, and one Python namespace shared by its Python blocks, as a reader
following the page would have. Blocks build on the earlier blocks of their page, so select
whole pages (`-k docs/results.md`), not single blocks. A block's rule is its language's default,
or the HTML comment on the line just above its fence:

    <!-- doc-test: RULE -->

Defaults, by language:

- `toml`: a scenario. One with a `[topology]` and a `[workload]` (or `[[jobs]]`) is taken as it
  is; any other is a fragment, merged into FRAGMENT_BASE as a sweep's `set` merges (a table whose
  `kind` or `algorithm` differs is replaced whole). It must pass `aiccsim validate` and
  `aiccsim run` must finish it (exit 0). A sweep file (`base` with `[grid]` or `[[point]]`) is
  run by `aiccsim sweep -j 2`.
- `sh`: each line that is not a comment is a command run by bash in the session folder, exit 0.
- `console`: `$ ` lines are commands; the lines up to the next `$ ` are what the command prints
  (stdout then stderr), compared as below.
- `python`: run in the page's namespace; a block of `>>> ` lines runs line by line and the other
  lines are what the line before printed, or its exception as `aiccsim.Name: message`.
- `json`: must parse.
- `text`, `csv`, `rust`: no default: each needs a rule, so a new output sample cannot go
  unchecked.

Rules (the comment above the fence):

- `file PATH`: the block is also written to PATH in the session folder, when the page's
  session starts (a command may come before the file it uses).
- `output`: the block is what the page's previous runnable block printed.
- `stdout of `CMD``, `stderr of `CMD``, `output of `CMD`` (stdout then stderr), optionally
  followed by `, exit N`: CMD runs in the session folder; the block is what it printed.
- `lines of PATH after `CMD``: every line of the block is a line of PATH, in the same order (a
  sample of a table, an excerpt of a JSON file); `same as PATH after `CMD``: the block is the
  whole file. CMD runs once per page, so several blocks can sample one run.
- `excerpt of REPO_PATH`: the block's lines are lines of that file of the repository, in order
  (Rust code shown from the compiled source; an excerpt of an experiment file).
- `files under REPO_DIR`: a file listing: the first word of each line (each word, where the line
  is a row of names) names a file or folder that exists under REPO_DIR.
- `make -n`: `make` targets, checked with `make -n` in the repository (they rebuild the
  project or run this suite).
- `pip extras`: `pip install '.[X]'` lines: each extra X exists in pyproject.toml (building the
  wheel takes minutes; the tests use `make python`'s build).
- `not run: REASON`: a drawing or a grammar, not code. Keep these few.

Modifiers, after a rule or alone: `with NAME = REPO_PATH` (copy a repository file into the
session folder first; `PAGE#PATH` copies the block that PAGE writes to PATH), `after `CMD`` (run
CMD first, once per page), and for `sh` and `python` `except `TEXT`: REASON` (lines containing
TEXT are not run: a shell line is checked against `aiccsim SUB --help` instead, and every option
it uses must be listed there). Keep these few too.

A command line whose comment names result files (`--out DIR  # flows.csv, summary.json, ...`,
or Python's `r.write("DIR")`) must name exactly the files written there (some of them when the
list has `...`).

Comparing printed text: trailing spaces and blank lines at the end are ignored; a line `...`
stands for any number of lines, and a line ending in `...` for any line that starts with what
comes before it. Figures of the wall clock (`0.02 s wall, 11.5 M packet-hops/s`, the
`performance` block of summary.json) and of this machine (its available memory) are the one
thing masked: everything else, figures included, must match exactly, so a doc that quotes a
number quotes the real one.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import aiccsim

from conftest import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
LINKED = ["examples", "experiments", "benches", "tests"]
TIMEOUT = 600

# Fragments (a `[cc]` table, a `[topology]`) are checked inside this small scenario: 5 hosts on
# one switch, a 4-to-1 incast of 200 KB.
FRAGMENT_BASE = {
    "topology": {"kind": "star", "hosts": 5, "link": {"bandwidth": "100Gbps", "delay": "1us"}},
    "workload": {"kind": "incast", "senders": "1..=4", "receiver": 0, "size": "200KB"},
}

FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+)(?P<info>.*)$")
ANNOTATION = re.compile(r"^\s*<!-- doc-test: (?P<rule>.*) -->\s*$")
VARYING = [
    (
        re.compile(r"more than the [0-9.]+ [KMGT]?B this machine has available"),
        "more than the MEMORY this machine has available",
    ),
    (re.compile(r"\([0-9.]+ s wall, [0-9.]+ M packet-hops/s\)"), "(WALL s wall, WALL M packet-hops/s)"),
    (re.compile(r'("(?:wall_seconds|events_per_second|packet_hops_per_second)": )[0-9.e+-]+'), r"\1WALL"),
]


@dataclass
class Block:
    doc: Path
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    rule: str = ""
    unclosed: bool = False

    @property
    def id(self) -> str:
        return f"{self.doc.relative_to(REPO)}:{self.line}:{self.lang or 'none'}"


def blocks_of(doc: Path) -> list[Block]:
    lines = doc.read_text().split("\n")
    found = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent, fence = len(opening["indent"]), opening["fence"]
        annotation = ANNOTATION.match(lines[i - 1]) if i > 0 else None
        body = []
        j = i + 1
        while j < len(lines) and lines[j].strip() != fence:
            body.append(lines[j][indent:] if lines[j][:indent].strip() == "" else lines[j])
            j += 1
        found.append(
            Block(
                doc,
                i + 1,
                opening["info"].strip(),
                "\n".join(body) + "\n",
                annotation["rule"].strip() if annotation else "",
                unclosed=j == len(lines),
            )
        )
        i = j + 1
    return found


BLOCKS = [block for doc in DOCS for block in blocks_of(doc)]


def test_docs_have_blocks() -> None:
    # A harness that finds nothing passes for nothing.
    assert len(BLOCKS) > 50, [b.id for b in BLOCKS]


@dataclass
class Session:
    """One page's state: its folder, its Python namespace, what ran."""

    folder: Path
    namespace: dict = field(default_factory=dict)
    last_output: str | None = None
    ran: dict = field(default_factory=dict)


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Session]:
    made: dict[Path, Session] = {}

    class Sessions(dict):
        def __missing__(self, doc: Path) -> Session:
            folder = tmp_path_factory.mktemp(doc.stem)
            for name in LINKED:
                (folder / name).symlink_to(REPO / name)
            # A page's files are there from the start, as for a reader who has them: a command
            # may come before the file it uses.
            for block in BLOCKS:
                rule = RULE.match(block.rule)
                if block.doc == doc and rule and rule["file"]:
                    (folder / rule["file"]).parent.mkdir(parents=True, exist_ok=True)
                    (folder / rule["file"]).write_text(block.text)
            made[doc] = Session(folder, {"__name__": "__main__"})
            self[doc] = made[doc]
            return made[doc]

    return Sessions()


@pytest.fixture(scope="module")
def env(aiccsim_bin: Path) -> dict[str, str]:
    venv_bin = Path(sys.executable).parent
    return {
        **os.environ,
        # The binary under test before the venv's `aiccsim` script, which runs the Python
        # package's copy of the same command.
        "PATH": f"{aiccsim_bin.parent}{os.pathsep}{venv_bin}{os.pathsep}{os.environ['PATH']}",
        "AICCSIM_PYTHON": sys.executable,
        "MPLBACKEND": "Agg",
    }


def shell(command: str, session: Session, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-o", "pipefail", "-c", command],
        cwd=session.folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def run_ok(command: str, session: Session, env: dict[str, str]) -> str:
    done = shell(command, session, env)
    assert done.returncode == 0, f"`{command}` exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def run_once(command: str, session: Session, env: dict[str, str]) -> None:
    if command not in session.ran:
        session.ran[command] = run_ok(command, session, env)


def masked(text: str) -> list[str]:
    for pattern, replacement in VARYING:
        text = pattern.sub(replacement, text)
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def line_matches(expected: str, actual: str) -> bool:
    if expected.endswith("...") and expected.strip() != "...":
        return actual.startswith(expected[:-3])
    return expected == actual


def assert_prints(expected: str, actual: str, what: str) -> None:
    """`actual` is `expected`, with `...` lines standing for any lines."""
    want, got = masked(expected), masked(actual)

    def matches(w: int, g: int) -> bool:
        if w == len(want):
            return g == len(got)
        if want[w].strip() == "...":
            return any(matches(w + 1, k) for k in range(g, len(got) + 1))
        return g < len(got) and line_matches(want[w], got[g]) and matches(w + 1, g + 1)

    assert matches(0, 0), f"{what} printed:\n" + "\n".join(got) + "\n\nthe doc says:\n" + "\n".join(want)


def assert_lines_in(expected: str, actual: str, what: str) -> None:
    """Every line of `expected` (`...` lines left out) is a line of `actual`, in the same order."""
    got = [line.rstrip().rstrip(",") for line in masked(actual)]
    at = 0
    for line in masked(expected):
        if line.strip() == "..." or not line:
            continue
        want = line.rstrip(",")
        while at < len(got) and not line_matches(want, got[at]):
            at += 1
        assert at < len(got), f"{what}: no line {want!r} (in this order); it has:\n" + "\n".join(got[:60])
        at += 1


def assert_excerpt(expected: str, actual: str, what: str) -> None:
    """The block is runs of consecutive lines of `actual`, in order; a line `...` (or `# ...`,
    which keeps TOML valid) marks where lines are left out. Indentation, blank lines and TOML
    comments (`# ` to the end of a line), which an excerpt may add to explain, are left aside."""

    def code(line: str) -> str:
        return re.sub(r"(^|\s+)#( .*)?$", "", line.strip())

    lines = [code(line) for line in actual.splitlines() if code(line)]
    runs: list[list[str]] = [[]]
    for line in expected.splitlines():
        if line.strip() in ["...", "# ..."]:
            runs.append([])
        elif code(line):
            runs[-1].append(code(line))
    at = 0
    for run in filter(None, runs):
        found = next((i for i in range(at, len(lines) - len(run) + 1) if lines[i : i + len(run)] == run), None)
        assert found is not None, f"{what} has no lines (after its line {at} of code):\n" + "\n".join(run)
        at = found + len(run)


def merged(base: dict, change: dict) -> dict:
    out = dict(base)
    for key, value in change.items():
        old = out.get(key)
        replaces = isinstance(old, dict) and any(
            tag in value and tag in old and value[tag] != old[tag] for tag in ["kind", "algorithm"]
        )
        out[key] = merged(old, value) if isinstance(old, dict) and isinstance(value, dict) and not replaces else value
    return out


def check_toml(block: Block, path: str | None, session: Session, env: dict[str, str]) -> None:
    table = tomllib.loads(block.text)
    name = path or f"block-{block.line}.toml"
    target = session.folder / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(block.text)
    if "base" in table and ("grid" in table or "point" in table):
        run_ok(f"aiccsim sweep {shlex.quote(name)} -j 2 --out sweep-{block.line}", session, env)
        return
    assert "run" not in table, "an experiment file needs a rule (`excerpt of experiments/ID/experiment.toml`)"
    if "topology" in table and ("workload" in table or "jobs" in table):
        run_ok(f"aiccsim validate {shlex.quote(name)}", session, env)
        run_ok(f"aiccsim run {shlex.quote(name)} --quiet --out run-{block.line}", session, env)
        return
    result = aiccsim.run(merged(FRAGMENT_BASE, table))
    assert result.summary["stop_reason"] == "completed", result.summary["stop_reason"]
    # The fragment's settings must be in the scenario that ran, not lost in the merge.
    assert_fragment_kept(table, result.scenario, block)


def assert_fragment_kept(fragment: dict, resolved: dict, block: Block) -> None:
    for key, value in fragment.items():
        assert key in resolved, f"{block.id}: {key} is not in the resolved scenario"
        if isinstance(value, dict):
            assert_fragment_kept(value, resolved[key], block)


def help_check(line: str, env: dict[str, str]) -> None:
    words = shlex.split(line.split(" #")[0])
    assert words[0] == "aiccsim", f"only aiccsim lines can be checked against --help: {line}"
    top = subprocess.run(["aiccsim", "--help"], env=env, capture_output=True, text=True, check=True).stdout
    assert re.search(rf"^\s+{re.escape(words[1])}\s", top, re.M), f"no subcommand {words[1]}:\n{top}"
    sub = subprocess.run(["aiccsim", words[1], "--help"], env=env, capture_output=True, text=True, check=True).stdout
    for word in words[2:]:
        if word.startswith("-"):
            assert re.search(rf"(^|[\s,]){re.escape(word)}[\s=<]", sub, re.M), f"{word} is not an option:\n{sub}"


def check_sh(block: Block, skipped: list[str], session: Session, env: dict[str, str]) -> None:
    output = []
    for line in block.text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if any(text in line for text in skipped):
            help_check(line, env)
            continue
        output.append(run_ok(line, session, env))
        assert_files_listed(line, session)
    session.last_output = "".join(output)


def assert_files_listed(line: str, session: Session) -> None:
    """A command writing to `--out DIR` whose comment names result files names the files it wrote
    (some of them, when the list ends in `...`)."""
    out = re.search(r"--out (\S+)|\.write\(\"([^\"]+)\"\)", line.split(" #")[0])
    named = (
        set(re.findall(r"\b\w+\.(?:csv|json|parquet|svg|toml|png)\b", line.split(" #", 1)[-1]))
        if " #" in line
        else set()
    )
    if not out or not named:
        return
    written = {path.name for path in (session.folder / (out[1] or out[2])).iterdir() if path.is_file()}
    if "..." in line.split(" #", 1)[1]:
        assert named <= written, f"`{line}`: it wrote {sorted(written)}"
    else:
        assert named == written, f"`{line}`: it wrote {sorted(written)}"


def check_console(block: Block, session: Session, env: dict[str, str]) -> None:
    commands: list[tuple[str, list[str]]] = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            commands.append((line[2:], []))
        else:
            assert commands, f"output before the first `$ ` command: {line}"
            commands[-1][1].append(line)
    for command, expected in commands:
        assert_prints("\n".join(expected), run_ok(command, session, env), f"`{command}`")


def check_python(block: Block, skipped: list[str], session: Session) -> None:
    if any(line.startswith(">>> ") for line in block.text.splitlines()):
        check_interactive(block, session)
        return
    source = "\n".join(
        "pass  # not run" if any(text in line for text in skipped) else line for line in block.text.splitlines()
    )
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, block.id, "exec"), session.namespace)
    session.last_output = out.getvalue()
    for line in source.splitlines():
        assert_files_listed(line, session)


def check_interactive(block: Block, session: Session) -> None:
    steps: list[tuple[str, list[str]]] = []
    for line in block.text.splitlines():
        if line.startswith(">>> "):
            steps.append((line[4:], []))
        elif line.strip():
            steps[-1][1].append(line)
    for statement, expected in steps:
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(statement, block.id, "single"), session.namespace)
        except Exception as error:  # noqa: BLE001 - the doc shows which exception
            shown = traceback.format_exception_only(type(error), error)[-1].strip()
            name = type(error).__name__
            # Shown as `aiccsim.Name`, the name users catch it by.
            if getattr(aiccsim, name, None) is type(error):
                shown = f"aiccsim.{name}: {error}"
            out.write(shown + "\n")
        assert_prints("\n".join(expected), out.getvalue(), f">>> {statement}")


def check_files(block: Block, folder: str) -> None:
    root = REPO / folder
    named = 0
    for line in block.text.splitlines():
        # Indented lines continue a description (or list a subfolder's files in prose).
        if not line.strip() or line.startswith(" "):
            continue
        # A row of names (`time.rs rng.rs tags.rs   what they are`) or one name and its description.
        names = line.split("  ")[0].split()
        if not all(re.fullmatch(r"[\w-]+(\.\w+|/)", name) for name in names):
            names = names[:1]
        if len(names) == 1 and "/" in names[0].rstrip("/") and (REPO / names[0]).is_dir():
            # A heading: the files below are in this folder of the repository.
            root = REPO / names[0]
            continue
        for name in names:
            assert (root / name).exists(), f"{block.id}: {(root / name).relative_to(REPO)} does not exist"
            named += 1
    assert named, f"{block.id}: no file named"


def check_make(block: Block, env: dict[str, str]) -> None:
    for line in block.text.splitlines():
        command = line.split("#")[0].split()
        if not command:
            continue
        assert command[0] == "make", line
        done = subprocess.run(["make", "-n", *command[1:]], cwd=REPO, env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"make -n {command[1:]}: {done.stderr}"


def check_pip(block: Block) -> None:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for line in block.text.splitlines():
        command = line.split("#")[0].strip()
        if not command:
            continue
        words = shlex.split(command)
        assert words[:2] == ["pip", "install"], line
        for extra in re.findall(r"\[([^\]]*)\]", words[2]):
            for name in extra.split(","):
                assert name in extras, f"{line}: pyproject.toml has no extra {name!r} (it has {sorted(extras)})"


def copy_in(name: str, source: str, session: Session) -> None:
    """A repository file, or with `PAGE#PATH` the block another page writes to PATH, copied into
    the session folder as `name`."""
    target = session.folder / name
    target.parent.mkdir(parents=True, exist_ok=True)
    page, _, path = source.partition("#")
    if not path:
        shutil.copyfile(REPO / source, target)
        return
    written = [b for b in BLOCKS if b.doc == REPO / page and RULE.match(b.rule)["file"] == path]
    assert len(written) == 1, f"{page} has no `file {path}` block"
    target.write_text(written[0].text)


RULE = re.compile(
    r"^(?P<verb>file (?P<file>\S+)|(?P<stream>stdout|stderr|output) of `(?P<cmd>[^`]+)`(?:, exit (?P<exit>\d+))?|output"
    r"|(?P<compare>lines of|same as) (?P<path>\S+) after `(?P<after>[^`]+)`|excerpt of (?P<excerpt>\S+)"
    r"|files under (?P<under>\S+)|make -n|pip extras|not run: .+)?"
    r"(?P<modifiers>.*)$"
)
MODIFIER = re.compile(
    r"\s*[,;]?\s*(?:with (?P<name>\S+) = (?P<source>[^\s,;]+)|after `(?P<first>[^`]+)`|except `(?P<skip>[^`]+)`)"
)


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.id)
def test_block(block: Block, sessions: dict[Path, Session], env: dict[str, str], monkeypatch) -> None:
    assert not block.unclosed, "the fence is never closed"
    session = sessions[block.doc]
    monkeypatch.chdir(session.folder)
    rule = RULE.match(block.rule) if block.rule else None
    assert rule or not block.rule, f"unknown rule: {block.rule!r}"
    modifiers = rule["modifiers"] if rule else ""
    skipped: list[str] = []
    position = 0
    while position < len(modifiers):
        modifier = MODIFIER.match(modifiers, position)
        if not modifier or modifier.end() == position:
            # `except `TEXT`: REASON` ends the rule with its reason.
            assert skipped and modifiers[position:].lstrip().startswith(":"), (
                f"unknown modifier: {modifiers[position:]!r}"
            )
            break
        if modifier["name"]:
            copy_in(modifier["name"], modifier["source"], session)
        if modifier["first"]:
            run_once(modifier["first"], session, env)
        if modifier["skip"]:
            skipped.append(modifier["skip"])
        position = modifier.end()
    verb = (rule["verb"] if rule else "") or ""

    if verb == "output":
        assert session.last_output is not None, "no runnable block before this one"
        assert_prints(block.text, session.last_output, "the block before")
    elif rule and rule["cmd"]:
        done = shell(rule["cmd"], session, env)
        printed = {"stdout": done.stdout, "stderr": done.stderr, "output": done.stdout + done.stderr}[rule["stream"]]
        expected_exit = int(rule["exit"] or 0)
        assert done.returncode == expected_exit, f"`{rule['cmd']}` exited {done.returncode}: {done.stderr}"
        assert_prints(block.text, printed, f"`{rule['cmd']}`")
    elif rule and rule["compare"]:
        run_once(rule["after"], session, env)
        actual = (session.folder / rule["path"]).read_text()
        if rule["compare"] == "same as":
            assert_prints(block.text, actual, rule["path"])
        else:
            assert_lines_in(block.text, actual, rule["path"])
    elif rule and rule["excerpt"]:
        assert_excerpt(block.text, (REPO / rule["excerpt"]).read_text(), rule["excerpt"])
        if block.lang == "toml":
            tomllib.loads(block.text)
    elif rule and rule["under"]:
        check_files(block, rule["under"])
    elif verb == "make -n":
        check_make(block, env)
    elif verb == "pip extras":
        check_pip(block)
    elif verb.startswith("not run: "):
        pass
    elif block.lang == "toml":
        check_toml(block, rule["file"] if rule else None, session, env)
    elif block.lang == "sh":
        check_sh(block, skipped, session, env)
    elif block.lang == "console":
        check_console(block, session, env)
    elif block.lang == "python":
        check_python(block, skipped, session)
    elif block.lang == "json":
        json.loads(block.text)
    else:
        pytest.fail(f"no rule for a {block.lang or 'plain'} block: add a language or a <!-- doc-test: ... --> line")
