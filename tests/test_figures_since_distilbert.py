"""Lesson 09's mechanism pictures: the KV cache growing (the shapes of the decoder's own cache),
query heads sharing key/value heads (repeat_kv's order), and the online softmax's blocks (the
running maximum and sums of the loop, and its result equal to plain attention)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from course_utils import attention, decoder, figures, grouped_query
from course_utils.figures import boxes
from course_utils.online_softmax import blocked_attention, blocked_attention_steps
from tests.test_figures_boxes import assert_fits, boxes_of


def plain(text: str) -> str:
    return re.sub(r"<[^>]+>", "", text)


def test_the_kv_cache_figure_draws_the_shapes_of_the_decoders_cache():
    config = decoder.DecoderConfig(vocab_size=50, dim=32, n_layers=2, n_heads=4, n_kv_heads=2)
    torch.manual_seed(0)
    model = decoder.Decoder(config).eval()
    prompt = [1, 7, 9]
    written = decoder.generate(model, prompt, 3)
    tokens = [f"w{i}" for i in prompt + written]
    fig = figures.kv_cache_figure(tokens, len(prompt), config)
    texts = [plain(a["text"]) for a in boxes_of(fig.to_plotly_json()["layout"])]
    assert len(texts) == 1 + len(written)
    cache = model.new_cache()
    with torch.no_grad():
        for step, ids in enumerate([prompt, *[[t] for t in written]]):
            model(torch.tensor([ids]), cache)
            B, H_kv, t, d = cache.keys[0].shape  # what the model holds after the step
            assert f"(B, H_kv, t, d) = ({B}, {H_kv}, {t}, {d})" in texts[step]
            assert f"k, v of: {' '.join(tokens[:t])}" in texts[step]
            assert f"× {t} keys" in texts[step]
    assert_fits(fig.layout.meta["narrow_layout"], boxes.NARROW_DESIGN_PX)
    assert_fits(fig.to_plotly_json()["layout"], boxes.WIDE_DESIGN_PX)


@pytest.mark.parametrize("kv_heads", [8, 2, 1])
def test_the_sharing_figure_joins_each_query_head_to_the_head_repeat_kv_gives_it(kv_heads):
    fig = figures.kv_sharing_figure(8, (kv_heads,))
    lines, queries, shared = fig.data
    q_x, kv_x = np.array(queries.x, dtype=float), np.array(shared.x, dtype=float)
    starts, ends = np.array(lines.x[0::3], dtype=float), np.array(lines.x[1::3], dtype=float)
    read = [int(np.argmin(np.abs(kv_x - e))) for e in ends]
    labelled = torch.arange(kv_heads, dtype=torch.float64).reshape(1, kv_heads, 1, 1)
    expected = grouped_query.repeat_kv(labelled, 8 // kv_heads).reshape(8).long().tolist()
    np.testing.assert_allclose(starts, q_x)
    assert read == expected  # query head i reads key/value head i // (H / H_kv)
    assert f"cache {kv_heads}/8" in fig.layout.annotations[0].text


def test_the_online_softmax_figure_draws_the_loops_state():
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal(4), rng.standard_normal((12, 4)), rng.standard_normal((12, 2))
    fig = figures.online_softmax_figure(q, k, v, 4)
    bars = [t for t in fig.data if t.type == "bar"]
    scores = k @ q / 2.0  # sqrt(d_k) = 2
    np.testing.assert_allclose(np.concatenate([np.array(b.y, dtype=float) for b in bars]), scores, rtol=5e-4)
    maxima = [float(t.y[0]) for t in fig.data if t.type == "scatter"]
    np.testing.assert_allclose(maxima, [scores[:4].max(), scores[:8].max(), scores.max()], rtol=5e-4)
    written = [a.text for a in fig.layout.annotations]
    sums = [float(re.search(r"ℓ = (\d+\.\d\d)", text).group(1)) for text in written]
    expected = [np.exp(scores[:stop] - scores[:stop].max()).sum() for stop in (4, 8, 12)]
    np.testing.assert_allclose(sums, np.round(expected, 2), atol=0.0051)
    output, _ = attention.scaled_dot_product_attention(q[None], k, v)
    assert boxes.vector(output[0]) in fig.layout.title.text.split("softmax · V = ")[1]
    assert boxes.vector(output[0]) in fig.layout.title.text.split(";")[0]


def test_blocked_attention_is_the_last_step_of_its_loop():
    rng = np.random.default_rng(1)
    q, k, v = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 10, 4)), rng.standard_normal((2, 10, 5))
    states = list(blocked_attention_steps(q, k, v, 4))
    assert [(s.start, s.stop) for s in states] == [(0, 4), (4, 8), (8, 10)]
    np.testing.assert_allclose((states[-1].acc / states[-1].l).numpy(), blocked_attention(q, k, v, 4))
    np.testing.assert_allclose(blocked_attention(q, k, v, 4), attention.scaled_dot_product_attention(q, k, v)[0],
                               atol=1e-12)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: figures.kv_sharing_figure(8, (3,)), "dividing them"),
        (lambda: figures.kv_sharing_figure(32, (8,)), "at most 16"),
        (lambda: figures.online_softmax_figure(np.ones(4), np.ones((12, 3)), np.ones((12, 2)), 4), "keys"),
        (lambda: figures.online_softmax_figure(np.ones(4), np.ones((12, 4)), np.ones((12, 2)), 2), "at most 4 blocks"),
        (lambda: figures.kv_cache_figure(["a", "b"], 2, decoder.DecoderConfig(vocab_size=9)), "1 to 4 written"),
    ],
)
def test_bad_inputs_get_clear_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()
