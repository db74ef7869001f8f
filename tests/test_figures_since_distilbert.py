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


def plain(text: str) -> str:
    return re.sub(r"<[^>]+>", "", text)


def cells_of(layout, step, layer, kind):
    """The cells a layout draws for one step, layer and kind (k or v): (index, new, x0, x1)."""
    found = []
    for shape in layout["shapes"]:
        words = shape.get("name", "").split()
        if shape["type"] == "rect" and words[:5] == ["step", str(step), "layer", str(layer), kind]:
            found.append((int(words[5]), words[-1] == "new", shape["x0"], shape["x1"]))
    return sorted(found)


def test_the_kv_cache_figure_draws_the_decoders_cache_cell_by_cell():
    config = decoder.DecoderConfig(vocab_size=50, dim=32, n_layers=2, n_heads=4, n_kv_heads=2)
    torch.manual_seed(0)
    model = decoder.Decoder(config).eval()
    prompt = [1, 7, 9]
    written = decoder.generate(model, prompt, 3)
    tokens = [f"w{i}" for i in prompt + written]
    fig = figures.kv_cache_figure(tokens, len(prompt), config)
    wide = fig.to_plotly_json()["layout"]
    narrow = fig.layout.meta["narrow_layout"]
    cache = model.new_cache()
    with torch.no_grad():
        for step, ids in enumerate([prompt, *[[t] for t in written]]):
            model(torch.tensor([ids]), cache)
            for layout in (wide, narrow):
                notes = {a.get("name"): plain(a["text"]) for a in layout["annotations"]}
                for layer in range(config.n_layers):
                    B, H_kv, t, d = cache.keys[layer].shape  # what the model holds after the step
                    assert notes[f"step {step} shape"].endswith(f"({B}, {H_kv}, {t}, {d})")
                    for kind in ("k", "v"):
                        cells = cells_of(layout, step, layer, kind)
                        assert [i for i, *_ in cells] == list(range(t))  # one cell a cached token
                        # the cells this step added are marked new: the prompt's, then one a step
                        assert [i for i, new, *_ in cells if new] == (list(range(t)) if step == 0 else [t - 1])
                        assert [notes[f"step {step} layer {layer} {kind} {i}"] for i in range(t)] == tokens[:t]
                    reads = [s for s in layout["shapes"] if s.get("name", "").startswith(f"step {step} layer {layer} reads")]
                    if step == 0:
                        assert not reads and f"step 0 layer {layer} query" not in notes
                        assert notes["step 0 head"].startswith(f"prompt: {len(prompt)} queries × {t} keys")
                    else:  # the new query, over its own cell, reads every cached key
                        keys = cells_of(layout, step, layer, "k")
                        assert sorted(s["x1"] for s in reads) == pytest.approx([(x0 + x1) / 2 for _, _, x0, x1 in keys])
                        assert f"1 query × {t} keys" in notes[f"step {step} head"]
                        query = next(a for a in layout["annotations"] if a.get("name") == f"step {step} layer {layer} query")
                        assert keys[-1][2] < query["x"] < keys[-1][3]
    assert max(s["x1"] for s in narrow["shapes"]) <= boxes.NARROW_DESIGN_PX
    # on a laptop the two layers stand side by side: half as many bands' rows as on a phone
    assert len({s["y0"] for s in wide["shapes"] if s["type"] == "rect"}) * 2 == len(
        {s["y0"] for s in narrow["shapes"] if s["type"] == "rect"})


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
    if kv_heads == 1:  # one head serves them all: not "8 queries each"
        assert "1 key/value head, shared by all 8 queries" in fig.layout.annotations[0].text


def test_the_online_softmax_figure_draws_the_loops_state():
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal(4), rng.standard_normal((12, 4)), rng.standard_normal((12, 2))
    fig = figures.online_softmax_figure(q, k, v, 4)
    score_bars = [t for t in fig.data if t.type == "bar" and t.yaxis == "y"]
    scores = k @ q / 2.0  # sqrt(d_k) = 2
    np.testing.assert_allclose(np.concatenate([np.array(b.y, dtype=float) for b in score_bars]), scores, rtol=5e-4)
    assert len({b.marker.color for b in score_bars}) == 3  # each block its own colour (and hatching)
    assert len({b.marker.pattern.shape for b in score_bars}) == 3
    maxima = [float(t.y[0]) for t in fig.data if t.type == "scatter" and t.yaxis == "y"]
    m = [scores[:4].max(), scores[:8].max(), scores.max()]
    np.testing.assert_allclose(maxima, m, rtol=5e-4)
    # the running sum: under block n, block j's share is the sum of e^(s - m_n) over block j's keys,
    # so the earlier shares shrink by e^(m - m') when a block raises the maximum
    shares = [t for t in fig.data if t.type == "bar" and t.yaxis == "y2"]
    assert len(shares) == 3
    for j, trace in enumerate(shares):
        expected = [np.exp(scores[4 * j:4 * j + 4] - m[n]).sum() for n in range(j, 3)]
        np.testing.assert_allclose(np.array(trace.y, dtype=float), expected, rtol=5e-4)
        np.testing.assert_allclose(trace.x, [1.5 + 4 * n for n in range(j, 3)])  # under its block's bars
    sums = [np.exp(scores[:stop] - scores[:stop].max()).sum() for stop in (4, 8, 12)]
    stacks = [sum(float(t.y[n - j]) for j, t in enumerate(shares) if n >= j) for n in range(3)]
    np.testing.assert_allclose(stacks, sums, rtol=1e-3)  # each stack's height is ℓ
    before = [t for t in fig.data if t.type == "scatter" and t.yaxis == "y2"]  # ℓ before a shrink, dashed
    raised = [n for n in (1, 2) if m[n] > m[n - 1]]
    assert [float(t.y[0]) for t in before] == pytest.approx([sums[n - 1] for n in raised], rel=5e-4)
    notes = [a.text for a in fig.layout.annotations if a.yref == "y2"]
    written = [float(re.search(r"ℓ = (\d+\.\d\d)", text).group(1)) for text in notes]
    np.testing.assert_allclose(written, np.round(sums, 2), atol=0.0051)
    for n in (1, 2):
        factor = float(re.search(r"×(\d\.\d\d)", notes[n]).group(1))
        assert factor == pytest.approx(np.exp(m[n - 1] - m[n]), abs=0.0051)
    m_notes = [a.text for a in fig.layout.annotations if a.yref == "y"]
    assert m_notes == [f"m = {x:.2f}" for x in m]
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
        (lambda: figures.kv_cache_figure(["abcdefghij"] * 10, 6, decoder.DecoderConfig(vocab_size=9)), "fit 330 px"),
    ],
)
def test_bad_inputs_get_clear_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_the_next_token_figure_draws_the_shifted_targets_under_the_causal_mask():
    from course_utils import masking

    sequence = [2, 11, 12, 13, 14, 3]  # [CLS] ... [SEP], as ids
    input_ids, labels = decoder.next_token_batch([sequence], pad_id=0)
    names = {i: f"t{i}" for i in sequence}
    inputs = [names[i] for i in input_ids[0].tolist()]
    targets = [names[i] for i in labels[0].tolist()]
    fig = figures.next_token_figure(inputs, targets)
    T = len(inputs)
    allowed = masking.causal_mask(T)
    for layout in (fig.to_plotly_json()["layout"], fig.layout.meta["narrow_layout"]):
        notes = {a["name"]: plain(a["text"]) for a in layout["annotations"]}
        assert [notes[f"input {j}"] for j in range(T)] == inputs
        assert [notes[f"target {i}"] for i in range(T)] == [f"→ {t}" for t in targets]
        drawn = np.zeros((T, T), dtype=bool)
        for shape in layout["shapes"]:
            words = shape["name"].split()
            if words[0] == "position":
                drawn[int(words[1]), int(words[3])] = True
        np.testing.assert_array_equal(drawn, allowed)  # row i reads inputs 0 .. i, nothing after
        columns = {s["name"]: s for s in layout["shapes"] if s["name"].startswith("input")}
        for i in range(T):  # each target stands just right of its row's last cell: the shift by one
            target = next(a for a in layout["annotations"] if a["name"] == f"target {i}")
            assert target["x"] == pytest.approx(columns[f"input {i}"]["x1"] + 4)
        assert max(s["x1"] for s in layout["shapes"]) <= layout["xaxis"]["range"][1]
    with pytest.raises(ValueError, match="moved one place on"):
        figures.next_token_figure(inputs, inputs)
