#!/usr/bin/env python3
"""Builds deploy/Dockerfile without a Docker engine, by replaying its instructions in chroots.

Where no Docker daemon runs (CI sandboxes, this project's build machines), this checks the
Dockerfile itself, not a hand-kept copy of it: every stage starts from a debootstrap'ed Debian
bookworm root (what `debian:bookworm` is), RUN lines run in a chroot through the stage's SHELL,
COPY honours <Dockerfile>.dockerignore and --from=<stage>, and the final stage's USER,
WORKDIR and ENTRYPOINT are used to run the result. Needs root (chroot, mounts).

  deploy/replay-dockerfile.py --work DIR                  # build the stages under DIR
  deploy/replay-dockerfile.py --work DIR --reuse -- --help  # run the image with these arguments

The base root is made once, with debootstrap (Debian's package), in DIR/base, with the apt
sources the official image has (bookworm, bookworm-updates, bookworm-security).

Only the instructions deploy/Dockerfile uses are supported (FROM debian:bookworm [AS name],
SHELL, WORKDIR, COPY [--from=], RUN, ENV, USER, EXPOSE, ENTRYPOINT, CMD, LABEL); anything else
is an error naming the line, so the replay never silently differs from a real build.
"""

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SUPPORTED_BASE = "debian:bookworm"


# /etc/apt/sources.list.d/debian.sources as the official debian:bookworm image ships it.
IMAGE_APT_SOURCES = """Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""


class ReplayError(Exception):
    pass


def make_base(base):
    """A minimal bookworm root, as close to the debian:bookworm image as debootstrap gets."""
    if shutil.which("debootstrap") is None:
        raise ReplayError("debootstrap is not installed (apt-get install debootstrap)")
    partial = base.with_name(base.name + ".partial")
    if partial.exists():
        assert_nothing_mounted_under(partial)
        shutil.rmtree(partial)
    subprocess.run(["debootstrap", "--variant=minbase", "bookworm", str(partial),
                    "http://deb.debian.org/debian"], check=True)
    (partial / "etc/apt/sources.list").unlink(missing_ok=True)
    (partial / "etc/apt/sources.list.d/debian.sources").write_text(IMAGE_APT_SOURCES)
    partial.rename(base)


@dataclass
class Instruction:
    line: int
    keyword: str
    args: str


@dataclass
class Stage:
    index: int
    name: str
    root: Path
    shell: list = field(default_factory=lambda: ["/bin/sh", "-c"])
    workdir: str = "/"
    env: dict = field(default_factory=lambda: {"PATH": DEFAULT_PATH})
    user: str = "0:0"
    entrypoint: list = field(default_factory=list)
    cmd: list = field(default_factory=list)
    exposed: list = field(default_factory=list)


def parse_dockerfile(text):
    """Joins backslash continuations and drops comments, as Docker's parser does."""
    instructions, pending, start = [], "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if stripped.startswith("#") or (not stripped and pending):
            continue  # comments and blank lines inside a continuation are skipped, not joined
        if not stripped:
            continue
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        full = pending + stripped
        pending = ""
        keyword, _, args = full.partition(" ")
        instructions.append(Instruction(start, keyword.upper(), args.strip()))
    if pending:
        raise ReplayError("the Dockerfile ends inside a line continuation")
    return instructions


def json_or_shell(args, shell):
    """Exec form (a JSON array) runs as given; shell form runs through the stage's SHELL."""
    if args.startswith("["):
        try:
            value = json.loads(args)
        except json.JSONDecodeError as error:
            raise ReplayError(f"bad JSON array {args!r}: {error}") from None
        if not all(isinstance(item, str) for item in value):
            raise ReplayError(f"exec form must be an array of strings: {args!r}")
        return value
    return shell + [args]


def dockerignore_patterns(dockerfile, context):
    # BuildKit reads <Dockerfile>.dockerignore first, then <context>/.dockerignore.
    for candidate in (Path(str(dockerfile) + ".dockerignore"), context / ".dockerignore"):
        if candidate.exists():
            patterns = []
            for line in candidate.read_text().splitlines():
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                if line.startswith("!"):
                    raise ReplayError(f"{candidate}: exception patterns ('!') are not supported")
                patterns.append(pattern_regex(line.strip("/")))
            return patterns
    return []


def pattern_regex(pattern):
    """Go filepath.Match semantics plus '**': '*' and '?' stop at '/', '**' crosses it."""
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out + r"\Z")


def ignored(relative, patterns):
    # A pattern that matches a directory excludes everything below it.
    parts = relative.split("/")
    prefixes = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    return any(p.match(prefix) for p in patterns for prefix in prefixes)


def copy_tree_filtered(source, destination, context, patterns):
    for directory, subdirs, files in os.walk(source):
        rel_dir = Path(directory).relative_to(context).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        subdirs[:] = [d for d in subdirs if not ignored(rel_dir + d, patterns)]
        target = destination / Path(directory).relative_to(source)
        target.mkdir(parents=True, exist_ok=True)
        for name in files:
            if not ignored(rel_dir + name, patterns):
                shutil.copy2(Path(directory) / name, target / name, follow_symlinks=False)


def inside(root, path):
    return root / path.lstrip("/")


class Mounts:
    """/proc, /dev and the host's resolv.conf inside a stage, as a container has them."""

    def __init__(self, root):
        self.root = root
        self.mounted = []

    def __enter__(self):
        for kind, target in (("proc", "proc"), ("dev", "dev"), ("devpts", "dev/pts")):
            path = self.root / target
            path.mkdir(parents=True, exist_ok=True)
            if kind == "proc":
                command = ["mount", "-t", "proc", "proc", str(path)]
            else:
                command = ["mount", "--bind", "/" + target, str(path)]
            subprocess.run(command, check=True)
            self.mounted.append(path)
        shutil.copy2("/etc/resolv.conf", self.root / "etc/resolv.conf")
        return self

    def __exit__(self, *exc):
        for path in reversed(self.mounted):
            subprocess.run(["umount", "-l", str(path)], check=False)
        self.mounted.clear()


def assert_nothing_mounted_under(path):
    resolved = str(path.resolve())
    with open("/proc/mounts") as mounts:
        for line in mounts:
            target = line.split()[1]
            if target == resolved or target.startswith(resolved + "/"):
                raise ReplayError(f"{target} is still mounted; refusing to delete {path}")


def run_in_stage(stage, argv, user=None):
    env = dict(stage.env)
    env.setdefault("HOME", "/root")
    command = ["chroot"]
    if user and user not in ("0", "0:0", "root"):
        command.append(f"--userspec={user}")
    workdir = shlex.quote(stage.workdir)
    # chroot has no --chdir: cd first, then exec the exact argv.
    command += [str(stage.root), "/bin/sh", "-c", f'cd {workdir} && exec "$@"', "sh", *argv]
    with Mounts(stage.root):
        return subprocess.run(command, env=env).returncode


class Replay:
    def __init__(self, dockerfile, context, base, work, reuse):
        self.dockerfile, self.context, self.base, self.work = dockerfile, context, base, work
        self.reuse = reuse
        self.patterns = dockerignore_patterns(dockerfile, context)
        self.stages = []

    def stage_named(self, name):
        for stage in self.stages:
            if stage.name == name or str(stage.index) == name:
                return stage
        raise ReplayError(f"COPY --from={name}: no earlier stage has that name")

    def build(self):
        instructions = parse_dockerfile(self.dockerfile.read_text())
        current = None
        for step in instructions:
            where = f"{self.dockerfile}:{step.line}"
            print(f"[replay] {where} {step.keyword} {step.args}", flush=True)
            if step.keyword == "FROM":
                current = self.start_stage(step.args, where)
                continue
            if current is None:
                raise ReplayError(f"{where}: {step.keyword} before FROM")
            handler = getattr(self, "do_" + step.keyword.lower(), None)
            if handler is None:
                raise ReplayError(f"{where}: {step.keyword} is not supported by this replay")
            handler(current, step.args, where)
        if current is None:
            raise ReplayError("the Dockerfile has no FROM")
        return current

    def start_stage(self, args, where):
        words = args.split()
        if len(words) not in (1, 3) or (len(words) == 3 and words[1].upper() != "AS"):
            raise ReplayError(f"{where}: expected 'FROM image [AS name]'")
        if words[0] != SUPPORTED_BASE:
            raise ReplayError(f"{where}: only {SUPPORTED_BASE} can be replayed from --base")
        index = len(self.stages)
        name = words[2] if len(words) == 3 else str(index)
        stage = Stage(index, name, self.work / f"stage-{index}-{name}")
        if not self.reuse:
            if stage.root.exists():
                assert_nothing_mounted_under(stage.root)
                shutil.rmtree(stage.root)
            subprocess.run(["cp", "-a", str(self.base), str(stage.root)], check=True)
        self.stages.append(stage)
        return stage

    def do_shell(self, stage, args, where):
        stage.shell = json_or_shell(args, [])
        if not args.startswith("["):
            raise ReplayError(f"{where}: SHELL takes a JSON array")

    def do_workdir(self, stage, args, where):
        stage.workdir = os.path.join(stage.workdir, args)
        if not self.reuse:
            inside(stage.root, stage.workdir).mkdir(parents=True, exist_ok=True)

    def do_env(self, stage, args, where):
        key, sep, value = args.partition("=")
        if not sep:
            key, _, value = args.partition(" ")
        stage.env[key.strip()] = value.strip().strip('"')

    def do_user(self, stage, args, where):
        stage.user = args

    def do_expose(self, stage, args, where):
        stage.exposed += args.split()

    def do_label(self, stage, args, where):
        pass

    def do_entrypoint(self, stage, args, where):
        stage.entrypoint = json_or_shell(args, stage.shell)

    def do_cmd(self, stage, args, where):
        stage.cmd = json_or_shell(args, stage.shell)

    def do_run(self, stage, args, where):
        if self.reuse:
            return
        code = run_in_stage(stage, json_or_shell(args, stage.shell), stage.user)
        if code != 0:
            raise ReplayError(f"{where}: RUN exited with {code}")

    def do_copy(self, stage, args, where):
        words = shlex.split(args)
        source_root, from_stage = self.context, None
        while words and words[0].startswith("--"):
            flag = words.pop(0)
            if flag.startswith("--from="):
                from_stage = self.stage_named(flag[len("--from="):])
                source_root = from_stage.root
            else:
                raise ReplayError(f"{where}: COPY {flag} is not supported")
        if len(words) < 2:
            raise ReplayError(f"{where}: COPY needs a source and a destination")
        *sources, dest = words
        if self.reuse:
            return
        dest_path = inside(stage.root, os.path.join(stage.workdir, dest))
        into_dir = dest.endswith("/") or dest in (".", "./") or len(sources) > 1
        for source in sources:
            src = inside(source_root, source) if from_stage else (self.context / source)
            if not src.exists():
                raise ReplayError(f"{where}: COPY source {source} does not exist")
            if from_stage is None:
                rel = src.resolve().relative_to(self.context.resolve()).as_posix()
                if rel != "." and ignored(rel, self.patterns):
                    raise ReplayError(f"{where}: COPY source {source} is excluded by .dockerignore")
            if src.is_dir():
                if from_stage is None:
                    copy_tree_filtered(src, dest_path, self.context, self.patterns)
                else:
                    shutil.copytree(src, dest_path, symlinks=True, dirs_exist_ok=True)
            else:
                target = dest_path / src.name if into_dir else dest_path
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, target)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dockerfile", type=Path, default=Path("deploy/Dockerfile"))
    parser.add_argument("--context", type=Path, default=Path("."))
    parser.add_argument("--base", type=Path, help="a bookworm root (default: WORK/base, made "
                        "with debootstrap when missing)")
    parser.add_argument("--work", type=Path, required=True, help="where the stages' roots go")
    parser.add_argument("--reuse", action="store_true",
                        help="skip building: reuse the stages in --work (to run the image again)")
    parser.add_argument("run", nargs="*", help="run the image: arguments after the ENTRYPOINT")
    options = parser.parse_args()
    # SIGTERM unwinds like Ctrl-C, so the chroot mounts are always taken down.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if os.geteuid() != 0:
        print("replay-dockerfile: needs root (chroot and mounts)", file=sys.stderr)
        return 2
    options.work.mkdir(parents=True, exist_ok=True)
    base = options.base or options.work / "base"
    try:
        if not options.reuse and not (base / "etc/debian_version").exists():
            if options.base:
                raise ReplayError(f"{base} is not a Debian root")
            make_base(base)
        final = Replay(options.dockerfile, options.context, base, options.work,
                       options.reuse).build()
    except (ReplayError, subprocess.CalledProcessError) as error:
        print(f"replay-dockerfile: {error}", file=sys.stderr)
        return 1
    print(f"[replay] image: {final.root} user={final.user} workdir={final.workdir} "
          f"entrypoint={final.entrypoint} cmd={final.cmd} expose={final.exposed}", flush=True)
    if not options.run and not options.reuse:
        return 0
    argv = final.entrypoint + (options.run or final.cmd)
    return run_in_stage(final, argv, final.user)


if __name__ == "__main__":
    sys.exit(main())
