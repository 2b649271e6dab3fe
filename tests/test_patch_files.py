"""The patch on disk: the multi-file diff, --write copies, --apply with backups and refusals, the shell snippet."""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
import yaml
from helpers import write_exact

from oomdoctor.errors import InputError
from oomdoctor.facts import KeyEdit
from oomdoctor.patch import PatchSet, apply_in_place, backup_of, build_patch, shell_snippet, write_copies

CONFIG = "### train\nper_device_train_batch_size: 4  # per GPU\ngradient_accumulation_steps: 2\n" \
         "deepspeed: ds/z2.json\n"
DS = '{\n  "zero_optimization": {\n    "stage": 2\n  }\n}\n'


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "ds").mkdir()
    (tmp_path / "train.yaml").write_text(CONFIG)
    (tmp_path / "ds" / "z2.json").write_text(DS)
    return tmp_path


def _plan() -> list[KeyEdit]:
    return [
        KeyEdit("train.yaml", ("per_device_train_batch_size",), 1),
        KeyEdit("train.yaml", ("gradient_accumulation_steps",), 8),
        KeyEdit("train.yaml", ("gradient_checkpointing",), True, after_key="gradient_accumulation_steps"),
        KeyEdit("ds/z2.json", ("zero_optimization", "stage"), 3),
        KeyEdit("ds/z2.json", ("zero_optimization", "offload_optimizer"), {"device": "cpu", "pin_memory": True}),
        KeyEdit("ds/offload.json", (), '{\n  "zero_optimization": {"stage": 3}\n}\n', create=True),
    ]


def _git_apply(repo: Path, diff: str) -> None:
    patch_file = repo.parent / "plan.diff"
    write_exact(patch_file, diff)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "apply", "--check", str(patch_file)], cwd=repo, check=True)
    subprocess.run(["git", "apply", str(patch_file)], cwd=repo, check=True)


def test_one_diff_covers_every_touched_file_with_paths_relative_to_cwd(project: Path):
    patch = build_patch(_plan(), cwd=str(project))
    headers = [line for line in patch.diff.splitlines() if line.startswith(("---", "+++"))]
    assert headers == ["--- a/train.yaml", "+++ b/train.yaml",
                       "--- a/ds/z2.json", "+++ b/ds/z2.json",
                       "--- /dev/null", "+++ b/ds/offload.json"]
    assert [f.created for f in patch.files] == [False, False, True]
    assert patch.files[0].path == "train.yaml" and patch.files[0].old_text == CONFIG


def test_git_apply_and_patch_p1_accept_the_diff_and_give_the_same_files(project: Path, tmp_path: Path):
    patch = build_patch(_plan(), cwd=str(project))
    clone = tmp_path / "clone"
    shutil.copytree(project, clone)
    _git_apply(clone, patch.diff)
    for fp in patch.files:
        assert (clone / fp.rel_path).read_text() == fp.new_text
    if shutil.which("patch"):
        other = tmp_path / "other"
        shutil.copytree(project, other)
        subprocess.run(["patch", "-p1", "-s", "-i", str(tmp_path / "plan.diff")], cwd=other, check=True)
        for fp in patch.files:
            assert (other / fp.rel_path).read_text() == fp.new_text


def test_the_diff_marks_a_missing_final_newline(tmp_path: Path):
    (tmp_path / "a.yaml").write_text("a: 1\nb: 2")
    patch = build_patch([KeyEdit("a.yaml", ("b",), 3)], cwd=str(tmp_path))
    assert patch.diff.endswith("-b: 2\n\\ No newline at end of file\n+b: 3\n\\ No newline at end of file\n")
    clone = tmp_path / "clone"
    clone.mkdir()
    shutil.copy(tmp_path / "a.yaml", clone / "a.yaml")
    _git_apply(clone, patch.diff)
    assert (clone / "a.yaml").read_bytes() == b"a: 1\nb: 3"


def test_crlf_files_round_trip_through_git_apply(tmp_path: Path):
    original = b"# win\r\nlr: 0.1\r\nbatch: 8\r\n"
    (tmp_path / "w.yaml").write_bytes(original)
    patch = build_patch([KeyEdit("w.yaml", ("batch",), 2), KeyEdit("w.yaml", ("accum",), 4)], cwd=str(tmp_path))
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / "w.yaml").write_bytes(original)
    _git_apply(clone, patch.diff)
    assert (clone / "w.yaml").read_bytes() == b"# win\r\nlr: 0.1\r\nbatch: 2\r\naccum: 4\r\n"
    if shutil.which("patch"):
        other = tmp_path / "other"
        other.mkdir()
        (other / "w.yaml").write_bytes(original)
        subprocess.run(["patch", "-p1", "-s", "-i", str(tmp_path / "plan.diff")], cwd=other, check=True)
        assert (other / "w.yaml").read_bytes() == (clone / "w.yaml").read_bytes()


def test_paths_are_resolved_against_cwd_and_a_file_outside_is_named_from_the_folder_that_holds_it(tmp_path: Path):
    # git apply refuses "a/../shared.json": a file outside the current folder is named relative to
    # the deepest folder holding every patched file, and PatchSet.cwd says which folder that is.
    sub = tmp_path / "run"
    sub.mkdir()
    (tmp_path / "shared.json").write_text('{"a": 1}')
    patch = build_patch([KeyEdit("../shared.json", ("a",), 2)], cwd=str(sub))
    assert patch.files[0].rel_path == "shared.json" and patch.cwd == str(tmp_path)
    assert "\n--- a/shared.json\n" in "\n" + patch.diff


def test_a_missing_file_is_an_input_error_naming_it(tmp_path: Path):
    with pytest.raises(InputError) as err:
        build_patch([KeyEdit("nope.yaml", ("a",), 1)], cwd=str(tmp_path))
    assert str(err.value).startswith("nope.yaml: no such file")


def test_a_file_that_is_not_utf8_is_an_input_error(tmp_path: Path):
    (tmp_path / "bad.yaml").write_bytes(b"a: 1\nb: \xff\n")
    with pytest.raises(InputError) as err:
        build_patch([KeyEdit("bad.yaml", ("a",), 2)], cwd=str(tmp_path))
    assert str(err.value) == "bad.yaml:2: not UTF-8 text"


# ---------------------------------------------------------------- idempotence

def test_applying_the_same_plan_twice_changes_nothing_the_second_time(project: Path):
    first = build_patch(_plan(), cwd=str(project))
    apply_in_place(first)
    after_first = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    second = build_patch(_plan(), cwd=str(project))
    assert second.files == () and second.diff == "" and not second
    assert apply_in_place(second) == []
    assert {p: p.read_bytes() for p in project.rglob("*") if p.is_file()} == after_first


def test_a_key_set_and_then_set_back_leaves_the_file_alone(project: Path):
    patch = build_patch([KeyEdit("train.yaml", ("per_device_train_batch_size",), 1),
                         KeyEdit("train.yaml", ("per_device_train_batch_size",), 4)], cwd=str(project))
    assert patch.files == ()


# ---------------------------------------------------------------- write_copies

def test_write_copies_keeps_the_layout_and_leaves_originals_alone(project: Path, tmp_path: Path):
    patch = build_patch(_plan(), cwd=str(project))
    out = tmp_path / "patched"
    written = write_copies(patch, out)
    assert sorted(p.relative_to(out).as_posix() for p in written) == ["ds/offload.json", "ds/z2.json", "train.yaml"]
    assert (project / "train.yaml").read_text() == CONFIG
    assert (project / "ds" / "z2.json").read_text() == DS
    assert not (project / "ds" / "offload.json").exists()
    assert yaml.safe_load((out / "train.yaml").read_text())["gradient_accumulation_steps"] == 8


def test_write_copies_refuses_to_overwrite_an_original(project: Path):
    patch = build_patch(_plan(), cwd=str(project))
    with pytest.raises(InputError) as err:
        write_copies(patch, project)
    assert "over an original" in str(err.value)
    assert (project / "train.yaml").read_text() == CONFIG
    assert not (project / "ds" / "offload.json").exists()


def test_write_copies_refuses_a_symlinked_directory_that_leads_to_the_originals(project: Path, tmp_path: Path):
    link = tmp_path / "link"
    link.symlink_to(project, target_is_directory=True)
    with pytest.raises(InputError):
        write_copies(build_patch(_plan(), cwd=str(project)), link)


def test_write_copies_keeps_a_file_from_outside_cwd_inside_dir(tmp_path: Path):
    sub = tmp_path / "run"
    sub.mkdir()
    (tmp_path / "shared.json").write_text('{"a": 1}')
    patch = build_patch([KeyEdit("../shared.json", ("a",), 2)], cwd=str(sub))
    written = write_copies(patch, tmp_path / "out")
    assert written == [tmp_path / "out" / "shared.json"]
    assert (tmp_path / "shared.json").read_text() == '{"a": 1}'


# ---------------------------------------------------------------- apply_in_place

def test_apply_in_place_writes_the_new_text_and_keeps_a_backup_and_the_mode(project: Path):
    cfg = project / "train.yaml"
    os.chmod(cfg, 0o640)
    patch = build_patch(_plan(), cwd=str(project))
    written = apply_in_place(patch)
    assert written == [project / "train.yaml", project / "ds" / "z2.json", project / "ds" / "offload.json"]
    assert cfg.read_text() == patch.files[0].new_text
    assert (project / "train.yaml.orig").read_text() == CONFIG
    assert (project / "ds" / "z2.json.orig").read_text() == DS
    assert not (project / "ds" / "offload.json.orig").exists()
    assert stat.S_IMODE(cfg.stat().st_mode) == 0o640
    assert backup_of(cfg) == project / "train.yaml.orig"
    assert not [p for p in project.rglob("*.tmp")], "no temp files left behind"


def test_an_existing_backup_is_never_clobbered(project: Path):
    cfg = project / "train.yaml"
    (project / "train.yaml.orig").write_text("an older backup\n")
    apply_in_place(build_patch(_plan()[:1], cwd=str(project)))
    assert (project / "train.yaml.orig").read_text() == "an older backup\n"
    assert (project / "train.yaml.orig.1").read_text() == CONFIG
    assert backup_of(cfg) == project / "train.yaml.orig.1"


def test_apply_refuses_a_file_changed_since_it_was_read_and_writes_nothing(project: Path):
    patch = build_patch(_plan(), cwd=str(project))
    (project / "ds" / "z2.json").write_text(DS.replace("2", "1"))   # someone edits it meanwhile
    with pytest.raises(InputError) as err:
        apply_in_place(patch)
    assert str(err.value).startswith("ds/z2.json: changed since it was read")
    assert (project / "train.yaml").read_text() == CONFIG            # checked all before writing any
    assert not (project / "train.yaml.orig").exists()
    assert not (project / "ds" / "offload.json").exists()


def test_apply_accepts_a_file_that_was_only_touched(project: Path):
    patch = build_patch(_plan()[:1], cwd=str(project))
    cfg = project / "train.yaml"
    os.utime(cfg, ns=(1, 1))
    apply_in_place(patch)
    assert yaml.safe_load(cfg.read_text())["per_device_train_batch_size"] == 1


def test_apply_refuses_to_create_a_file_someone_else_created(project: Path):
    patch = build_patch(_plan(), cwd=str(project))
    (project / "ds" / "offload.json").write_text("{}")
    with pytest.raises(InputError) as err:
        apply_in_place(patch)
    assert "ds/offload.json" in str(err.value)
    assert (project / "ds" / "offload.json").read_text() == "{}"


def test_an_empty_patch_set_applies_to_nothing(tmp_path: Path):
    assert apply_in_place(PatchSet()) == [] and write_copies(PatchSet(), tmp_path / "o") == []


# ---------------------------------------------------------------- shell snippet

def test_shell_snippet_is_empty_when_there_is_nothing_to_do():
    assert shell_snippet({}, []) == ""


def test_shell_snippet_exports_the_allocator_setting():
    text = shell_snippet({"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}, [])
    assert "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n" in text
    assert all(line.startswith(("#", "export ")) for line in text.splitlines())


def test_shell_snippet_quotes_values_and_keeps_notes_as_comments(tmp_path: Path):
    env = {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True", "ODD": "a b'c;$(rm -rf x)"}
    notes = ["launch with --num_gpus 4", "two lines\nrm -rf /"]
    text = shell_snippet(env, notes)
    assert "#   launch with --num_gpus 4" in text and "#   rm -rf /" in text
    assert not [line for line in text.splitlines() if line and not line.startswith(("#", "export "))]
    script = tmp_path / "env.sh"
    script.write_text(text)
    out = subprocess.run(["sh", "-c", f'. "{script}"; printf "%s|%s" "$PYTORCH_CUDA_ALLOC_CONF" "$ODD"'],
                         capture_output=True, text=True, check=True)
    assert out.stdout == "expandable_segments:True|a b'c;$(rm -rf x)"


def test_shell_snippet_rejects_a_bad_variable_name():
    with pytest.raises(ValueError):
        shell_snippet({"BAD-NAME": "1"}, [])


@pytest.mark.parametrize("name", ["my dir/x.yaml", 'odd"name.yaml', "tab\there.yaml", "réglage.yaml"])
def test_file_names_with_spaces_and_odd_characters_survive_git_apply_and_patch(tmp_path: Path, name: str):
    src = tmp_path / "src"
    (src / name).parent.mkdir(parents=True, exist_ok=True)
    (src / name).write_text("a: 1\n")
    patch = build_patch([KeyEdit(name, ("a",), 2)], cwd=str(src))
    clone = tmp_path / "clone"
    shutil.copytree(src, clone)
    _git_apply(clone, patch.diff)
    assert (clone / name).read_text() == "a: 2\n"
    if shutil.which("patch"):
        other = tmp_path / "other"
        shutil.copytree(src, other)
        subprocess.run(["patch", "-p1", "-s", "-i", str(tmp_path / "plan.diff")], cwd=other, check=True)
        assert (other / name).read_text() == "a: 2\n"


def test_applying_the_same_patch_set_twice_is_harmless(project: Path):
    patch = build_patch(_plan(), cwd=str(project))
    assert len(apply_in_place(patch)) == 3
    assert apply_in_place(patch) == []
    assert not (project / "train.yaml.orig.1").exists()


def test_a_symlinked_config_keeps_its_link_and_the_target_is_patched(tmp_path: Path):
    real = tmp_path / "configs" / "real.yaml"
    real.parent.mkdir()
    real.write_text("a: 1\n")
    link = tmp_path / "train.yaml"
    link.symlink_to(real)
    apply_in_place(build_patch([KeyEdit("train.yaml", ("a",), 2)], cwd=str(tmp_path)))
    assert link.is_symlink() and real.read_text() == "a: 2\n"
    assert (tmp_path / "train.yaml.orig").read_text() == "a: 1\n"


def test_a_mapping_value_merges_leaf_by_leaf_into_what_the_file_has(tmp_path: Path):
    (tmp_path / "t.yaml").write_text("fsdp_config:\n  a: 1\n  b: 2\n")
    patch = build_patch([KeyEdit("t.yaml", ("fsdp_config",), {"b": 3, "c": {"d": True}, "e": {}})],
                        cwd=str(tmp_path))
    assert patch.files[0].new_text == "fsdp_config:\n  a: 1\n  b: 3\n  c:\n    d: true\n  e: {}\n"


def test_a_later_edit_of_a_key_wins_and_keys_placed_after_it_still_find_it(tmp_path: Path):
    (tmp_path / "t.yaml").write_text("a: 1\nz: 0\n")
    patch = build_patch([KeyEdit("t.yaml", ("b",), 1, after_key="a"),
                         KeyEdit("t.yaml", ("c",), 1, after_key="b"),
                         KeyEdit("t.yaml", ("b",), 2, after_key="a")], cwd=str(tmp_path))
    assert patch.files[0].new_text == "a: 1\nb: 2\nc: 1\nz: 0\n"
