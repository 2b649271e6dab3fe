"""Never lose a user's file: --export, --write and --apply write as one transaction.

Every output is checked against every input and against the other outputs; the diff, the copies and
the edits go to temporaries beside their targets and are renamed together, rolled back when one rename
fails; a full disk, a read-only or hard-linked config, SIGTERM or SIGHUP leave every file as it was and
no temporary, backup or half-written file behind.
"""
from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from oomdoctor.cli import DEMO_DIR, main

CONFIG = (DEMO_DIR / "train.yaml").read_text(encoding="utf-8")
LOG = (DEMO_DIR / "train.log").read_text(encoding="utf-8")
# A LLaMA-Factory config whose plan touches two files: the YAML and the DeepSpeed JSON it names.
TWO_FILES = CONFIG.replace("finetuning_type: full", "finetuning_type: full\ndeepspeed: ds/z0.json")
DS = '{\n  "train_micro_batch_size_per_gpu": "auto",\n  "zero_optimization": {"stage": 0}\n}\n'


@pytest.fixture()
def proj(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / "train.yaml").write_text(CONFIG, encoding="utf-8")
    (tmp_path / "train.log").write_text(LOG, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _tree(root: Path) -> dict[str, bytes]:
    """Every file below root with its bytes: what a run left behind."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------- 1. outputs never land on inputs

@pytest.mark.parametrize("target", ["train.yaml", "train.log", "./sub/../train.yaml"])
def test_export_over_an_input_is_refused_and_the_input_is_untouched(proj: Path, capsys, target):
    (proj / "sub").mkdir()
    before = _tree(proj)
    code, _, err = _run(capsys, "train.log", "train.yaml", "--plain", "--export", target)
    assert code == 2 and "is also an input" in err and len(err.strip().splitlines()) == 1
    assert _tree(proj) == before


def test_export_over_a_hard_link_or_symlink_of_an_input_is_refused(proj: Path, capsys):
    os.link(proj / "train.yaml", proj / "alias.yaml")
    (proj / "log-link").symlink_to(proj / "train.log")
    for target in ("alias.yaml", "log-link"):
        code, _, err = _run(capsys, "train.log", "train.yaml", "--plain", "--export", target)
        assert code == 2 and "is also an input" in err
    assert (proj / "train.yaml").read_text(encoding="utf-8") == CONFIG
    assert (proj / "train.log").read_text(encoding="utf-8") == LOG


def test_export_onto_the_path_of_a_patched_copy_is_refused(proj: Path, capsys):
    code, _, err = _run(capsys, "train.log", "train.yaml", "--plain", "--export", "fixed/train.yaml",
                        "--write", "fixed")
    assert code == 2 and "would be written twice" in err
    assert not (proj / "fixed").exists()


def test_write_into_the_folder_of_the_inputs_is_refused(proj: Path, capsys):
    code, _, err = _run(capsys, "train.log", "train.yaml", "--plain", "--write", ".")
    assert code == 2 and "original" in err
    assert (proj / "train.yaml").read_text(encoding="utf-8") == CONFIG


def test_export_replaces_an_older_diff_whole_and_keeps_its_mode(proj: Path, capsys):
    old = proj / "plan.diff"
    old.write_text("stale\n")
    old.chmod(0o640)
    code, _, err = _run(capsys, "train.log", "train.yaml", "--plain", "--export", "plan.diff")
    assert code == 1 and old.read_text().startswith("--- a/train.yaml")
    assert stat.S_IMODE(old.stat().st_mode) == 0o640
    assert sorted(p.name for p in proj.iterdir()) == ["plan.diff", "train.log", "train.yaml"]


def _fail_writes(monkeypatch, after_bytes: int = 0, *, only: str = "") -> None:
    """A full disk from now on: os.write raises ENOSPC once `after_bytes` were written (to a file whose
    name contains `only`)."""
    written = {"n": 0}
    real_write, real_fstat = os.write, os.fstat

    def full(fd, data):
        name = os.readlink(f"/proc/self/fd/{fd}") if os.path.exists(f"/proc/self/fd/{fd}") else ""
        if only and only not in name:
            return real_write(fd, data)
        if written["n"] + len(data) > after_bytes:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written["n"] += len(data)
        return real_write(fd, data)

    assert real_fstat
    monkeypatch.setattr(os, "write", full)


def test_export_on_a_full_disk_leaves_neither_an_empty_file_nor_a_temporary(proj: Path, capsys, monkeypatch):
    before = _tree(proj)
    _fail_writes(monkeypatch, only="plan.diff")
    code, _, err = _run(capsys, "train.log", "train.yaml", "--plain", "--export", "plan.diff")
    assert code == 2 and "No space left on device" in err and "plan.diff" in err
    assert _tree(proj) == before


def test_export_on_a_full_disk_keeps_the_older_diff(proj: Path, capsys, monkeypatch):
    (proj / "plan.diff").write_text("the diff of yesterday\n")
    before = _tree(proj)
    _fail_writes(monkeypatch, after_bytes=10, only="plan.diff")
    code, _, _ = _run(capsys, "train.log", "train.yaml", "--plain", "--export", "plan.diff")
    assert code == 2 and _tree(proj) == before


# ---------------------------------------------------------------- 2. --apply: all files or none

# A rung that changes both files: the micro-batch lives in the YAML, the ZeRO stage in the JSON.
BOTH_RULE = """\
rules:
  - id: T001
    slug: both-files
    order: 1
    title: ZeRO-3 and micro-batch 1
    why: Touches the YAML and the DeepSpeed JSON.
    category: model states
    costs: [{kind: throughput, text: Slower.}]
    applicability: safe
    actions:
      - set: {field: zero_stage, value: 3}
      - set: {field: micro_batch, value: 1}
"""
TWO = ("train.log", "train.yaml", "--gpus", "8", "--rules", "rules")


@pytest.fixture()
def two(proj: Path) -> Path:
    (proj / "train.yaml").write_text(TWO_FILES, encoding="utf-8")
    (proj / "ds").mkdir()
    (proj / "ds" / "z0.json").write_text(DS, encoding="utf-8")
    (proj / "rules").mkdir()
    (proj / "rules" / "both.yaml").write_text(BOTH_RULE, encoding="utf-8")
    return proj


def _two_file_plan(two: Path, capsys) -> list[str]:
    code, out, _ = _run(capsys, *TWO, "--export", "-")
    assert code == 1
    touched = [line[6:] for line in out.splitlines() if line.startswith("+++ b/")]
    assert sorted(touched) == ["ds/z0.json", "train.yaml"], touched
    return touched          # in the order they are written


def test_apply_when_the_second_rename_fails_puts_the_first_file_back(two: Path, capsys, monkeypatch):
    first, second = _two_file_plan(two, capsys)
    before = _tree(two)
    real_replace = os.replace

    def refuse_second(src, dst, *a, **k):
        if str(dst) == str(two / second):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        return real_replace(src, dst, *a, **k)

    monkeypatch.setattr(os, "replace", refuse_second)
    code, _, err = _run(capsys, *TWO, "--plain", "--apply", "--yes")
    assert code == 2 and f"{second}: cannot write: Permission denied; no file was changed" in err
    assert _tree(two) == before                      # the first is back, no .orig, no temporary


def test_apply_when_the_disk_fills_on_the_second_file_changes_nothing(two: Path, capsys, monkeypatch):
    _, second = _two_file_plan(two, capsys)
    before = _tree(two)
    _fail_writes(monkeypatch, only=os.path.basename(second))
    code, _, err = _run(capsys, *TWO, "--plain", "--apply", "--yes")
    assert code == 2 and "No space left on device" in err
    assert _tree(two) == before


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes into a read-only folder")
def test_apply_with_the_json_in_a_read_only_folder_changes_nothing(two: Path, capsys):
    _two_file_plan(two, capsys)
    before = _tree(two)
    (two / "ds").chmod(0o555)
    try:
        code, _, err = _run(capsys, *TWO, "--plain", "--apply", "--yes")
    finally:
        (two / "ds").chmod(0o755)
    assert code == 2 and "ds/z0.json" in err
    assert _tree(two) == before


def test_apply_writes_both_files_and_keeps_both_originals(two: Path, capsys):
    _two_file_plan(two, capsys)
    code, _, err = _run(capsys, *TWO, "--plain", "--apply", "--yes")
    assert code == 1, err
    assert (two / "train.yaml.orig").read_text(encoding="utf-8") == TWO_FILES
    assert (two / "ds" / "z0.json.orig").read_text(encoding="utf-8") == DS
    assert (two / "train.yaml").read_text(encoding="utf-8") != TWO_FILES
    assert json.loads((two / "ds" / "z0.json").read_text())["zero_optimization"]["stage"] == 3
    assert "kept as" in err


# ---------------------------------------------------------------- 15. read-only, hard links, mode, owner

def test_apply_refuses_a_read_only_config_and_leaves_it_as_it_was(proj: Path, capsys):
    cfg = proj / "train.yaml"
    cfg.chmod(0o444)
    ino = cfg.stat().st_ino
    code, _, err = _run(capsys, "train.log", "train.yaml", "--plain", "--apply", "--yes")
    assert code == 2 and "train.yaml: is read-only" in err
    assert cfg.stat().st_ino == ino and stat.S_IMODE(cfg.stat().st_mode) == 0o444
    assert cfg.read_text(encoding="utf-8") == CONFIG and not (proj / "train.yaml.orig").exists()


def test_apply_refuses_a_config_with_another_hard_link(proj: Path, capsys):
    os.link(proj / "train.yaml", proj / "elsewhere.yaml")
    code, _, err = _run(capsys, "train.log", "train.yaml", "--plain", "--apply", "--yes")
    assert code == 2 and "hard links" in err
    assert (proj / "elsewhere.yaml").read_text(encoding="utf-8") == CONFIG
    assert (proj / "train.yaml").read_text(encoding="utf-8") == CONFIG


def test_apply_keeps_the_configs_mode_and_owner_and_the_backup_is_the_original_file(proj: Path, capsys):
    cfg = proj / "train.yaml"
    cfg.chmod(0o640)
    before = cfg.stat()
    code, _, _ = _run(capsys, "train.log", "train.yaml", "--plain", "--apply", "--yes")
    assert code == 1
    after = cfg.stat()
    assert stat.S_IMODE(after.st_mode) == 0o640 and (after.st_uid, after.st_gid) == (before.st_uid, before.st_gid)
    backup = (proj / "train.yaml.orig").stat()
    assert backup.st_ino == before.st_ino and backup.st_mtime_ns == before.st_mtime_ns


def test_apply_on_a_full_disk_leaves_no_stray_backup(proj: Path, capsys, monkeypatch):
    before = _tree(proj)
    _fail_writes(monkeypatch, only="train.yaml")
    code, _, err = _run(capsys, "train.log", "train.yaml", "--plain", "--apply", "--yes")
    assert code == 2 and "No space left on device" in err
    assert _tree(proj) == before


def _unshare_ok() -> bool:
    if not shutil.which("unshare") or sys.platform != "linux":
        return False
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /tmp"],
                           capture_output=True)
    return probe.returncode == 0


def _on_a_small_disk(tmp_path: Path, flags: list[str], free_pages: int) -> tuple[str, str, Path]:
    """Run on a 64 KiB tmpfs (a private mount namespace) holding the config, with `free_pages` 4 KiB
    pages left. Returns (exit code, stderr, a folder holding the listings before/after and the files)."""
    disk, notes = tmp_path / "disk", tmp_path / "notes"
    disk.mkdir()
    notes.mkdir()
    spare = f"dd if=/dev/zero of={disk}/spare bs=4k count={free_pages} 2>/dev/null && " if free_pages else ""
    script = (
        f"mount -t tmpfs -o size=64k tmpfs {disk} && cp {DEMO_DIR}/train.yaml {disk}/ && {spare}"
        f"(dd if=/dev/zero of={disk}/filler bs=4k; dd if=/dev/zero of={disk}/filler2 bs=1; true) 2>/dev/null && "
        f"rm -f {disk}/spare && ls -a {disk} > {notes}/before && cd {disk} && "
        f"{sys.executable} -m oomdoctor {DEMO_DIR}/train.log train.yaml --plain {' '.join(flags)} "
        f">/dev/null 2>{notes}/err; echo $? > {notes}/rc; ls -a {disk} > {notes}/after; "
        f"cp {disk}/train.yaml {notes}/config; cp {disk}/train.yaml.orig {notes}/backup 2>/dev/null; true")
    done = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return (notes / "rc").read_text().strip(), (notes / "err").read_text(), notes


@pytest.mark.skipif(not _unshare_ok(), reason="needs a private mount namespace to make a small file system")
@pytest.mark.parametrize("flags", [["--export", "plan.diff"], ["--apply", "--yes"], ["--write", "fixed"]])
def test_a_really_full_disk_leaves_the_folder_as_it_was(tmp_path: Path, flags):
    code, err, notes = _on_a_small_disk(tmp_path, flags, free_pages=0)
    assert code == "2", err
    assert "No space left on device" in err and len(err.splitlines()) == 1
    assert (notes / "after").read_text() == (notes / "before").read_text()
    assert (notes / "config").read_text(encoding="utf-8") == CONFIG


@pytest.mark.skipif(not _unshare_ok(), reason="needs a private mount namespace to make a small file system")
def test_apply_with_room_for_one_file_either_applies_whole_or_leaves_no_stray_backup(tmp_path: Path):
    # Room for one copy of the config: a backup written as a copy would take it and leave the new
    # text no room. The backup is a second name of the original, so the new text fits.
    code, err, notes = _on_a_small_disk(tmp_path, ["--apply", "--yes"], free_pages=1)
    listing = (notes / "after").read_text().split()
    if code == "2":
        assert listing == (notes / "before").read_text().split(), err
    else:
        assert code == "1", err
        assert (notes / "backup").read_text(encoding="utf-8") == CONFIG
        assert (notes / "config").read_text(encoding="utf-8") != CONFIG
        assert sorted(set(listing) - set((notes / "before").read_text().split())) == ["train.yaml.orig"]


# ---------------------------------------------------------------- signals: like Ctrl-C

_SIGNAL_RUN = """
import os, signal, sys
sig = getattr(signal, sys.argv[1])
# as a shell starts it: pytest-xdist's workers ignore SIGINT, and a child inherits an ignored signal
signal.signal(signal.SIGINT, signal.default_int_handler)
real_fsync, calls = os.fsync, []
def fsync(fd):
    calls.append(fd)
    if len(calls) == int(sys.argv[2]):
        os.kill(os.getpid(), sig)        # arrives while the transaction prepares its files
    return real_fsync(fd)
os.fsync = fsync
from oomdoctor.cli import main
raise SystemExit(main(sys.argv[3:]))
"""


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP", "SIGINT"])
@pytest.mark.parametrize("flags,nth", [(["--apply", "--yes"], 2), (["--export", "plan.diff"], 1),
                                       (["--write", "fixed", "--apply", "--yes"], 3)])
def test_a_signal_during_the_writes_cleans_up_and_exits_130(two: Path, sig, flags, nth):
    before = _tree(two)
    done = subprocess.run([sys.executable, "-c", _SIGNAL_RUN, sig, str(nth), *TWO, "--plain", *flags],
                          capture_output=True, text=True, cwd=two, timeout=60)
    assert done.returncode == 130, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "oomdoctor: interrupted"
    assert _tree(two) == before


# ---------------------------------------------------------------- 11. headers git apply accepts

@pytest.mark.skipif(not shutil.which("git"), reason="needs git")
def test_export_to_a_folder_outside_the_current_one_writes_names_git_apply_accepts(tmp_path: Path, capsys,
                                                                                    monkeypatch):
    proj, work = tmp_path / "proj", tmp_path / "work"
    proj.mkdir()
    work.mkdir()
    (proj / "train.yaml").write_text(CONFIG, encoding="utf-8")
    (proj / "train.log").write_text(LOG, encoding="utf-8")
    monkeypatch.chdir(work)
    code, _, err = _run(capsys, "../proj/train.log", "../proj/train.yaml", "--plain", "--export", "../proj/plan.diff")
    assert code == 1
    diff = (proj / "plan.diff").read_text()
    assert "--- a/train.yaml\n+++ b/train.yaml\n" in diff and "/../" not in diff
    hint = err.split("apply with: ")[1].split(")")[0]
    assert hint == f"cd {proj} && git apply {proj / 'plan.diff'}"
    subprocess.run(["git", "init", "-q"], cwd=proj, check=True)
    subprocess.run(["git", "apply", "--check", "plan.diff"], cwd=proj, check=True)


# ---------------------------------------------------------------- 14. --json with --export -

def test_json_with_export_to_stdout_is_refused_in_one_line(proj: Path, capsys):
    code, out, err = _run(capsys, "train.log", "train.yaml", "--json", "--export", "-")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and '"patch"' in err


def test_json_with_export_to_a_file_keeps_stdout_valid_json(proj: Path, capsys):
    code, out, _ = _run(capsys, "train.log", "train.yaml", "--json", "--export", "plan.diff")
    assert code == 1 and json.loads(out)["patch"] == (proj / "plan.diff").read_text()


def test_help_says_what_export_to_stdout_does_with_json(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "not with --json" in help_text and "never over an input" in help_text


# ---------------------------------------------------------------- stdout that cannot be written

@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("mode", ["--plain", "--json"])
def test_stdout_on_a_full_device_is_one_line_and_exit_2(mode):
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "oomdoctor", "--demo", mode], stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == ["oomdoctor: cannot write the report to standard output: No space left on device"]


def test_a_closed_pipe_is_quiet():
    done = subprocess.run(f"{sys.executable} -m oomdoctor --demo --plain | head -c 10 >/dev/null", shell=True,
                          stderr=subprocess.PIPE, text=True, timeout=60)
    assert done.stderr == ""


# ---------------------------------------------------------------- 6. a file name that is not UTF-8

@pytest.mark.skipif(sys.platform != "linux", reason="needs a file system that takes any bytes as a name")
def test_a_config_whose_name_is_not_utf8_is_patched_with_a_quoted_header(tmp_path: Path, monkeypatch):
    name = b"\xffrun.yaml"
    (tmp_path / "train.log").write_text(LOG, encoding="utf-8")
    with open(os.path.join(os.fsencode(tmp_path), name), "w", encoding="utf-8") as fh:
        fh.write(CONFIG)
    done = subprocess.run([sys.executable, "-m", "oomdoctor", b"train.log", name, b"--export", b"-"],
                          cwd=tmp_path, capture_output=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert b'--- "a/\\377run.yaml"\n+++ "b/\\377run.yaml"\n' in done.stdout
    if shutil.which("git"):
        (tmp_path / "plan.diff").write_bytes(done.stdout)
        subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
        subprocess.run(["git", "apply", "--check", "plan.diff"], cwd=tmp_path, check=True)
    plain = subprocess.run([sys.executable, "-m", "oomdoctor", b"train.log", name, b"--plain"], cwd=tmp_path,
                           capture_output=True, timeout=60)
    assert plain.returncode == 1, plain.stderr


def test_signal_module_is_left_as_it_was_after_an_in_process_run(proj: Path, capsys):
    before = signal.getsignal(signal.SIGTERM)
    _run(capsys, "train.log", "train.yaml", "--plain")
    assert signal.getsignal(signal.SIGTERM) is before


# ---------------------------------------------------------------- the transaction itself

def test_a_new_file_never_lands_over_one_created_meanwhile_and_the_others_are_put_back(tmp_path: Path, monkeypatch):
    from oomdoctor.errors import InputError
    from oomdoctor.patch.txn import Write, write_all

    old = tmp_path / "a.yaml"
    old.write_text("a: 1\n")
    new = tmp_path / "ds" / "new.json"
    real_link = os.link

    def someone_else_first(src, dst, *a, **k):
        if str(dst) == str(new):
            new.write_text("theirs\n")           # another process creates it between check and commit
        return real_link(src, dst, *a, **k)

    monkeypatch.setattr(os, "link", someone_else_first)
    with pytest.raises(InputError) as err:
        write_all([Write(str(old), b"a: 2\n"), Write(str(new), b"{}\n", own_file=True)])
    assert "was created by someone else" in str(err.value)
    assert old.read_text() == "a: 1\n" and new.read_text() == "theirs\n"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a.yaml", "ds", "new.json"]


def test_a_transaction_creates_missing_folders_and_removes_them_when_it_fails(tmp_path: Path, monkeypatch):
    from oomdoctor.errors import InputError
    from oomdoctor.patch.txn import Write, write_all

    _fail_writes(monkeypatch, only="second")
    with pytest.raises(InputError):
        write_all([Write(str(tmp_path / "x" / "y" / "first.txt"), b"1"),
                   Write(str(tmp_path / "z" / "second.txt"), b"2")])
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- two runs applying at once

def test_two_runs_applying_at_once_never_lose_the_update_or_leave_half_a_plan(tmp_path):
    """Two --apply --yes at once: one applies, the other refuses in one line (or finds it already
    applied); the config ends patched with its .orig the original. Before the lock, 4-14 rounds in 40
    ended with the original config, a stray DeepSpeed file and a .orig missing or hard-linked."""
    sys.path.insert(0, str(Path(__file__).parent))
    import fuzzkit

    found = {n: fuzzkit.concurrent_apply_round(tmp_path / str(n)) for n in range(6)}
    assert {n: p for n, p in found.items() if p} == {}


def test_a_run_that_applies_while_another_is_between_prepare_and_commit_is_refused(proj, capsys, monkeypatch):
    """The interleaving that lost the update: run B starts and ends while run A holds its temporaries.
    Before, B committed, A's DeepSpeed file then existed, and A's roll-back put the original back over
    B's config: the config was the original with a new DeepSpeed file beside it and no .orig."""
    import oomdoctor.patch.txn as txn

    real_commit = txn._commit
    other = []

    def commit_after_another_run(plans):
        if not other:
            env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
            other.append(subprocess.run([sys.executable, "-m", "oomdoctor", "train.log", "train.yaml", "--apply",
                                         "--yes"], cwd=str(proj), env=env, capture_output=True, timeout=120))
        return real_commit(plans)

    monkeypatch.setattr(txn, "_commit", commit_after_another_run)
    code = main(["train.log", "train.yaml", "--apply", "--yes", "--plain"])
    err = capsys.readouterr().err
    assert code == 1 and "updated train.yaml" in err
    assert other[0].returncode == 2 and b"another run of oomdoctor" in other[0].stderr
    assert other[0].stderr.count(b"\n") == 1
    assert (proj / "train.yaml").read_text(encoding="utf-8") != CONFIG
    assert (proj / "train.yaml.orig").read_text(encoding="utf-8") == CONFIG
    assert os.stat(proj / "train.yaml").st_nlink == 1
    assert sorted(p.name for p in proj.iterdir()) == ["ds_z2_offload_config.json", "train.log", "train.yaml",
                                                       "train.yaml.orig"]


def test_a_file_locked_by_another_run_is_refused_in_one_line(proj, capsys):
    import fcntl

    fd = os.open(proj / "train.yaml", os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        code = main(["train.log", "train.yaml", "--apply", "--yes", "--plain"])
    finally:
        os.close(fd)
    err = capsys.readouterr().err
    assert code == 2 and "another run of oomdoctor" in err and err.count("\n") == 1
    assert (proj / "train.yaml").read_text(encoding="utf-8") == CONFIG
    assert sorted(p.name for p in proj.iterdir()) == ["train.log", "train.yaml"]


def test_a_run_that_starts_between_another_runs_renames_is_refused_and_the_first_run_completes(proj, capsys,
                                                                                                monkeypatch):
    """Run B starts and ends after run A has renamed the new config into place and before A creates the
    DeepSpeed file. Before, B found the config already patched, created the DeepSpeed file itself without
    any lock, and A, finding that file made meanwhile, rolled its config back: the original config, a
    DeepSpeed file and no .orig. Now the new config is locked before it is renamed into place, and B
    decides what is already applied only under the lock, so B is refused and A completes."""
    import oomdoctor.patch.txn as txn

    real_link_new = txn._link_new
    other = []

    def link_after_another_run(plan):
        if not other:
            assert (proj / "train.yaml").read_text(encoding="utf-8") != CONFIG     # the config is renamed
            env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
            other.append(subprocess.run([sys.executable, "-m", "oomdoctor", "train.log", "train.yaml", "--apply",
                                         "--yes"], cwd=str(proj), env=env, capture_output=True, timeout=120))
        return real_link_new(plan)

    monkeypatch.setattr(txn, "_link_new", link_after_another_run)
    code = main(["train.log", "train.yaml", "--apply", "--yes", "--plain"])
    err = capsys.readouterr().err
    assert other, "the plan creates a file after renaming the config"
    assert code == 1 and "updated train.yaml" in err
    assert other[0].returncode == 2 and b"another run of oomdoctor" in other[0].stderr
    assert other[0].stderr.count(b"\n") == 1
    assert (proj / "train.yaml").read_text(encoding="utf-8") != CONFIG
    assert (proj / "train.yaml.orig").read_text(encoding="utf-8") == CONFIG
    assert os.stat(proj / "train.yaml").st_nlink == 1
    assert sorted(p.name for p in proj.iterdir()) == ["ds_z2_offload_config.json", "train.log", "train.yaml",
                                                       "train.yaml.orig"]


def test_a_config_already_patched_but_locked_by_another_run_is_refused_not_completed(proj, capsys, monkeypatch):
    """The other run has renamed its patched config into place and holds its lock, its DeepSpeed file not
    yet created. Before, this run saw the config "already applied", left it out of its lock and created the
    DeepSpeed file itself (the other run's link then failed and rolled its config back); now which files
    are already applied is decided under the lock of every file of the plan, and this run is refused."""
    import fcntl

    import oomdoctor.patch.deliver as deliver

    real_build = deliver.build_patch
    held = []

    def build_then_another_run_renames(edits, **kw):
        patch = real_build(edits, **kw)
        config = next(fp for fp in patch.files if fp.path == "train.yaml")
        new = proj / ".other-run.tmp"
        new.write_bytes(config.new_bytes())
        fd = os.open(new, os.O_RDONLY)
        fcntl.flock(fd, fcntl.LOCK_EX)
        held.append(fd)
        os.replace(new, proj / "train.yaml")
        return patch

    monkeypatch.setattr(deliver, "build_patch", build_then_another_run_renames)
    try:
        code = main(["train.log", "train.yaml", "--apply", "--yes", "--plain"])
    finally:
        for fd in held:
            os.close(fd)
    err = capsys.readouterr().err
    assert held, "the plan edits train.yaml"
    assert code == 2 and "another run of oomdoctor" in err and err.count("\n") == 1
    assert (proj / "train.yaml").read_text(encoding="utf-8") != CONFIG
    assert sorted(p.name for p in proj.iterdir()) == ["train.log", "train.yaml"]
