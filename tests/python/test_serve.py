"""nnergy.serve: the figures of `nnergy serve` as Python objects and DataFrames."""

import json
import subprocess

import pytest

import nnergy

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"


def test_serve_totals_match_the_cli_json(tmp_path):
    s = nnergy.serve(LLAMA, device="h100", input_tokens=1000, output_tokens=200)
    t = s.totals
    assert t.energy_per_output_token_j == pytest.approx(t.avg_power_w / t.output_tokens_per_s,
                                                        rel=1e-9)
    assert s.deployment["device"] == "h100-sxm"
    assert s.model["id"] == LLAMA
    assert set(s.phases["phase"]) == {"prefill", "decode"}
    assert {"attention", "mlp"} <= set(s.parts["part"])
    assert any("predicted" in n for n in s.notes)
    assert "J" in s.text() and LLAMA in repr(s)
    html = tmp_path / "serve.html"
    s.write_html(html)
    assert "<html" in html.read_text()


def test_serve_sweeps_are_dataframes():
    s = nnergy.serve(LLAMA, device="l40s", input_tokens=500, output_tokens=500,
                     sweep_batch=[1, 16, 64])
    assert list(s.batch_sweep["batch"]) == [1, 16, 64]
    j = s.batch_sweep["energy_per_output_token_j"]
    assert j.is_monotonic_decreasing  # more running sequences share the weights' reads
    c = nnergy.serve(LLAMA, device="h100", input_tokens=100, output_tokens=1000, max_batch=8,
                     sweep_clocks=True)
    assert len(c.clock_sweep) > 5
    assert c.energy_optimal_clock_mhz in set(c.clock_sweep["clock_mhz"])


def test_serve_takes_a_config_dict_as_transformers_gives_it(tmp_path):
    config = {"model_type": "llama", "hidden_size": 2048, "intermediate_size": 8192,
              "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 16,
              "vocab_size": 128256, "max_position_embeddings": 131072,
              "tie_word_embeddings": True}
    s = nnergy.serve(config, device="l4", input_tokens=200, output_tokens=200)
    # Llama 3.2 1B's shapes: 1.24 B parameters with tied embeddings.
    assert s.model["parameter_count"] == pytest.approx(1.236e9, rel=0.01)


def test_serve_refuses_bad_arguments_naming_them():
    with pytest.raises(nnergy.InvalidInput, match="did you mean"):
        nnergy.serve("llama-3.1-8x", input_tokens=10, output_tokens=10)
    with pytest.raises(nnergy.InvalidInput, match="tp=3"):
        nnergy.serve(LLAMA, tp=3, gpus=3, input_tokens=10, output_tokens=10)
    with pytest.raises(nnergy.InvalidInput, match="power_scope"):
        nnergy.serve(LLAMA, power_scope="wall", input_tokens=10, output_tokens=10)
    with pytest.raises(nnergy.InvalidInput, match="model: expected"):
        nnergy.serve(42, input_tokens=10, output_tokens=10)


def test_language_models_lists_the_catalog():
    df = nnergy.language_models()
    assert len(df) >= 40
    assert LLAMA in set(df["id"])
