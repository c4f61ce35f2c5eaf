"""The `vllm serve` flags a caller may not add after `murgat serve`'s options, in every spelling
vLLM's parser reads: `=`, underscores, dotted keys (`--api-key.x SECRET` is `--api-key
'{"x": "SECRET"}'` to vLLM), `+` lists, and abbreviations (its parser keeps argparse's
allow_abbrev). Pure logic, no engine; the last tests hold the spellings against vLLM's own parser."""

from __future__ import annotations

import contextlib
import io

import pytest

from murgat_local.serving import ServeRefused
from murgat_local.serving.launcher import check_extra

REFUSED = [
    "--host",
    "--api-key",
    "--allowed-media-domains",
    "--allowed-local-media-path",
    "--config",
]


def spellings(flag: str) -> list[list[str]]:
    """Ways to write `flag` that vLLM's parser reads as that flag."""
    under = "--" + flag[2:].replace("-", "_")
    mixed = "--" + flag[2:].replace("-", "_", 1)
    names = [flag, under, mixed]
    if flag != "--config":  # `--confi` could also be --config-format: ambiguous, an error in vLLM
        short = flag[:-1]
        names += [short, "--" + short[2:].replace("-", "_")]
    out = []
    for name in dict.fromkeys(names):
        out += [
            [name, "v"],
            [f"{name}=v"],
            [f"{name}.x", "SECRET"],
            [f"{name}.x=SECRET"],
            [f"{name}.x.y", "SECRET"],
            [f"{name}.x+", "a,b"],
            [f"{name}.x+=a,b"],
        ]
    return out


CASES = [(flag, args) for flag in REFUSED for args in spellings(flag)]


@pytest.mark.parametrize("flag,args", CASES, ids=[" ".join(a) for _, a in CASES])
def test_every_spelling_of_a_refused_flag_is_refused(flag, args):
    with pytest.raises(ServeRefused, match="is not passed to vLLM") as e:
        check_extra(args)
    assert flag in str(e.value)


@pytest.mark.parametrize(
    "args",
    [
        ["--api-key.x", "SECRET"],
        ["--api_key.x=SECRET"],
        ["--api-k.x", "SECRET"],
        ["--api-key", "SECRET"],
    ],
)
def test_a_refusal_does_not_echo_the_value(args):
    with pytest.raises(ServeRefused) as e:
        check_extra(args)
    assert "SECRET" not in str(e.value)


@pytest.mark.parametrize(
    "args",
    [
        # A refused flag anywhere among the arguments: after another flag's value, after `--`.
        ["--max-num-seqs", "4", "--host.x", "1"],
        ["--", "--api-key.x", "k"],
        ["--enforce-eager", "--config=c.yaml"],
        # Shorter prefixes are ambiguous to argparse (an error there), refused here all the same.
        ["--api", "k"],
        ["--allowed", "x"],
        ["--h", "x"],
        ["--confi", "x"],
        ["--con.x", "1"],
    ],
)
def test_a_refused_flag_is_found_among_others(args):
    with pytest.raises(ServeRefused):
        check_extra(args)


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--max-num-seqs", "4"],
        ["--api-server-count", "2"],
        ["--allowed-origins", '["x"]'],
        ["--allowed-methods=GET"],
        ["--hf-overrides.max_position_embeddings", "1024"],
        [
            "--compilation-config.host",
            "1",
        ],  # a dotted key named like a refused flag: another flag's
        ["--served-model-name=a.b"],
        ["--served-model-name", "a.host"],
        ["--config-format", "hf"],
        ["--uds", "/tmp/s"],
        ["-tp", "1"],
        ["-O3"],
    ],
)
def test_other_flags_pass(args):
    check_extra(args)


# --- against vLLM's own parser ------------------------------------------------------------


@pytest.fixture(scope="module")
def vllm_parser():
    """The parser `vllm serve` runs with (its top-level parser, which rewrites dotted and
    underscored flags, and the serve subparser)."""
    from vllm.entrypoints.cli.serve import ServeSubcommand
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    top = FlexibleArgumentParser()
    serve = ServeSubcommand().subparser_init(top.add_subparsers(dest="subparser"))
    return top, serve


DESTS = ["host", "api_key", "allowed_media_domains", "allowed_local_media_path", "config"]


def reaches(parser, args, tmp_path) -> set[str]:
    """The refused settings vLLM's parser sets from `args` (nothing when it rejects them; an
    error before argparse, such as `--config v` read as a config file, counts as reached)."""
    top, _ = parser
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            ns = top.parse_args(["serve", str(tmp_path), *args])
    except SystemExit:
        return set()
    except ValueError as e:
        return {f"ValueError: {e}"}
    return {d for d in DESTS if getattr(ns, d, None) not in (None, "", [])}


def test_the_spellings_tested_are_ones_vllm_reads(vllm_parser, tmp_path):
    """So the cases above are real: vLLM sets the refused flag from every one of them."""
    for flag, args in CASES:
        if flag == "--config" and args[0] == "--config":
            continue  # a config file's path: next test
        assert reaches(vllm_parser, args, tmp_path) == {flag[2:].replace("-", "_")}, args


def test_a_config_file_sets_the_host(vllm_parser, tmp_path):
    """Why --config is refused: the file's keys become flags."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text("host: 0.0.0.0\n")
    assert reaches(vllm_parser, ["--config", str(cfg)], tmp_path) == {"host"}


def variants(option: str) -> list[list[str]]:
    """An option of vLLM's written every way its parser allows, each prefix of it included."""
    out = []
    for n in range(3, len(option) + 1):
        name = option[:n]
        for spelled in {name, "--" + name[2:].replace("-", "_")}:
            out += [[spelled, "v"], [f"{spelled}=v"], [f"{spelled}.x", "v"], [f"{spelled}.x+", "v"]]
    return out


def test_whatever_reaches_a_refused_flag_in_vllm_is_refused_here(vllm_parser, tmp_path):
    """Every option of `vllm serve`, every prefix of it, with dashes or underscores, plain, `=`,
    dotted or `+`: where vLLM's parser sets a refused flag from it, `check_extra` refuses it; and
    no full option of vLLM's other than the refused ones is refused."""
    _, serve = vllm_parser
    # A short alias (`-H`) of a refused flag would need its own spelling rules here.
    assert all(
        o.startswith("--") for a in serve._actions if a.dest in DESTS for o in a.option_strings
    )
    options = sorted({o for a in serve._actions for o in a.option_strings if o.startswith("--")})
    missed, over, seen = [], [], set()
    for option in options:
        dest = next(a.dest for a in serve._actions if option in a.option_strings)
        try:
            check_extra([option, "v"])
            refused = False
        except ServeRefused:
            refused = True
        if refused != (dest in DESTS):
            over.append(option)
        if dest not in DESTS and not any(r.startswith(option[:3]) for r in REFUSED):
            continue  # no prefix of it could reach a refused flag
        for args in variants(option):
            if tuple(args) in seen:
                continue
            seen.add(tuple(args))
            if reaches(vllm_parser, args, tmp_path):
                try:
                    check_extra(args)
                    missed.append(args)
                except ServeRefused:
                    pass
    assert not missed, missed
    assert not over, over
