"""Tests of lesson 06's course_utils.figures.pattern_finder and .attention_explorer: reading a typed
text safely, the attention maps, the pattern finder, and the explorer (its kernel-free twin replays the per-layer figure for every pair
(example, layer); its live app redraws and shows bad input as a message).

The model is a tiny random BERT on the bundled course tokenizer, read through
``DistilBertEncoder.from_bert`` (and, for the maps, compared with the BERT itself).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from plotly.utils import PlotlyJSONEncoder
from transformers import BertConfig, BertModel

from course_utils import figures, tokenization
from course_utils.encoder import DistilBertEncoder

MAX_POSITIONS = 24


@pytest.fixture(scope="module")
def tokenizer():
    return tokenization.load_tokenizer(prefer="bundled", verbose=False)


@pytest.fixture(scope="module")
def bert(tokenizer):
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=8,
        num_hidden_layers=3,
        num_attention_heads=2,
        intermediate_size=16,
        max_position_embeddings=MAX_POSITIONS,
        attn_implementation="eager",
    )
    model = BertModel(config).eval()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.normal_(0, 0.5)
    return model


@pytest.fixture(scope="module")
def encoder(bert):
    return DistilBertEncoder.from_bert(bert).eval()


EXAMPLES = {"the cat": "the cat is happy, but it is not calm", "two dogs": "my dogs are brave ."}


# --------------------------------------------------------------------------------------------
# prepare_text


def test_an_ordinary_text_has_no_notice(tokenizer):
    prepared = figures.prepare_text("the cat is happy, but it is not calm", tokenizer, MAX_POSITIONS)
    assert prepared.tokens[0] == "[CLS]" and prepared.tokens[-1] == "[SEP]"
    assert list(prepared.input_ids) == tokenizer("the cat is happy, but it is not calm")["input_ids"]
    assert prepared.notices == () and not prepared.truncated
    assert prepared.n_tokens == len(prepared.tokens)


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_an_empty_text_is_refused_with_an_example(tokenizer, text):
    with pytest.raises(ValueError, match="expected some text to explore, got an empty text: type a sentence, e.g."):
        figures.prepare_text(text, tokenizer, MAX_POSITIONS)


def test_a_long_text_is_truncated_with_a_notice(tokenizer, capsys):
    text = "the cat is happy . " * 20  # 100 words and dots
    prepared = figures.prepare_text(text, tokenizer, MAX_POSITIONS)
    assert len(prepared.tokens) == MAX_POSITIONS and prepared.tokens[-1] == "[SEP]"
    assert prepared.truncated and prepared.n_tokens == len(tokenizer(text, verbose=False)["input_ids"])
    assert len(prepared.notices) == 1
    assert f"has {prepared.n_tokens} tokens" in prepared.notices[0]
    assert f"only {MAX_POSITIONS} positions" in prepared.notices[0]
    assert capsys.readouterr().err == ""  # no tokenizer warning about the length


def test_unknown_characters_are_named(tokenizer):
    prepared = figures.prepare_text("I love NLP! 5€", tokenizer, MAX_POSITIONS)
    assert "[UNK]" in prepared.tokens
    (notice,) = prepared.notices
    assert "'!'" in notice and "'5€'" in notice and "became [UNK]" in notice
    assert notice.startswith("2 pieces of the text")


def test_a_text_of_unknown_characters_only_and_a_bad_call(tokenizer):
    prepared = figures.prepare_text("€", tokenizer, MAX_POSITIONS)
    assert prepared.tokens == ("[CLS]", "[UNK]", "[SEP]")
    assert prepared.notices[0].startswith("1 piece of the text ('€') is not in")
    with pytest.raises(TypeError, match="expected the text as a string, got int"):
        figures.prepare_text(3, tokenizer, MAX_POSITIONS)
    with pytest.raises(ValueError, match="expected max_length to be an integer of at least 3"):
        figures.prepare_text("the cat", tokenizer, 2)


# --------------------------------------------------------------------------------------------
# attention_maps


def test_attention_maps_of_the_encoder_equal_berts(bert, encoder, tokenizer):
    ids = figures.prepare_text(EXAMPLES["the cat"], tokenizer, MAX_POSITIONS).input_ids
    ours = figures.attention_maps(encoder, ids)
    theirs = figures.attention_maps(bert, ids)
    assert ours.shape == (3, 2, len(ids), len(ids)) and ours.dtype == np.float64
    np.testing.assert_allclose(ours, theirs, atol=1e-5, rtol=0)
    np.testing.assert_allclose(ours.sum(-1), 1, atol=1e-5)


@pytest.mark.parametrize("batch_size", [1, 2, 64])
def test_attention_samples_in_padded_batches_equal_one_by_one(bert, encoder, tokenizer, batch_size):
    texts = [EXAMPLES["the cat"], "my dogs are brave .", "it is calm", "the cat is happy . " * 10]
    for model in (encoder, bert):
        samples = figures.attention_samples(model, tokenizer, texts, MAX_POSITIONS, batch_size=batch_size)
        assert len(samples) == len(texts)
        for text, (tokens, maps) in zip(texts, samples):
            prepared = figures.prepare_text(text, tokenizer, MAX_POSITIONS)
            assert tokens == prepared.tokens
            np.testing.assert_allclose(maps, figures.attention_maps(model, prepared.input_ids), atol=1e-5, rtol=0)
    with pytest.raises(ValueError, match="expected batch_size to be a positive integer"):
        figures.attention_samples(encoder, tokenizer, texts, MAX_POSITIONS, batch_size=0)


def test_attention_maps_explain_a_model_without_weights(bert):
    sdpa = BertModel(bert.config.__class__(**{**bert.config.to_dict(), "attn_implementation": "sdpa"})).eval()
    with pytest.raises(ValueError, match="load it with attn_implementation='eager'"):
        figures.attention_maps(sdpa, [2, 10, 3])
    with pytest.raises(ValueError, match="load it with attn_implementation='eager'"):
        figures.attention_samples(sdpa, tokenization.load_tokenizer(prefer="bundled", verbose=False), ["it is"], 8)


def test_max_positions(encoder, bert):
    assert figures.max_positions(encoder) == figures.max_positions(bert) == MAX_POSITIONS
    with pytest.raises(TypeError, match="max_position_embeddings"):
        figures.max_positions(object())


# --------------------------------------------------------------------------------------------
# The pattern finder

TOKENS = ["[CLS]", "a", "b", "c", "[SEP]"]


def _pattern_heads() -> np.ndarray:
    """(L=1, H=5, T=5, T=5): previous token, itself, [CLS], [SEP], uniform."""
    n = len(TOKENS)
    previous = np.zeros((n, n))
    previous[0, 0] = 1
    previous[np.arange(1, n), np.arange(n - 1)] = 1
    cls = np.zeros((n, n))
    cls[:, 0] = 1
    sep = np.zeros((n, n))
    sep[:, -1] = 1
    return np.stack([previous, np.eye(n), cls, sep, np.full((n, n), 1 / n)])[None]


def test_head_behaviours_measure_each_pattern():
    scores = figures.head_behaviours(_pattern_heads(), TOKENS)
    assert set(scores) == set(figures.BEHAVIOURS)
    np.testing.assert_allclose(scores["previous token"][0], [1, 0, 0.25, 0, 0.2])
    np.testing.assert_allclose(scores["itself"][0], [0.2, 1, 0.2, 0.2, 0.2])
    np.testing.assert_allclose(scores["[CLS]"][0], [0.4, 0.2, 1, 0, 0.2])  # rows 0 and 1 -> [CLS]
    np.testing.assert_allclose(scores["[SEP]"][0], [0, 0.2, 0, 1, 0.2])
    np.testing.assert_allclose(scores["next token"][0], [0, 0, 0, 0.25, 0.2])
    np.testing.assert_allclose(scores["broad"][0], [0, 0, 0, 0, 1], atol=1e-12)


def test_uniform_behaviours_are_one_over_t_and_broad_one():
    baseline = figures.uniform_behaviours(TOKENS)
    for name in ("previous token", "next token", "itself", "[CLS]", "[SEP]"):
        assert baseline[name] == pytest.approx(0.2)
    assert baseline["broad"] == pytest.approx(1.0)


def test_rank_heads_gives_the_best_heads_and_why():
    scores, baseline = figures.average_behaviours([(TOKENS, _pattern_heads())])
    (best, second) = figures.rank_heads(scores, baseline, "previous token", top=2)
    assert (best.layer, best.head, best.score) == (1, 1, 1.0)
    assert best.reason == (
        "1.00 of each token's attention goes to the token just before it (a head attending uniformly: 0.20)"
    )
    assert (second.layer, second.head) == (1, 3)  # 0.25, then the uniform head's 0.2
    assert [r.head for r in figures.rank_heads(scores, baseline, "broad", top=1)] == [5]
    with pytest.raises(ValueError, match="expected a behaviour among"):
        figures.rank_heads(scores, baseline, "sideways")
    with pytest.raises(ValueError, match="expected top to be an integer from 1 to L\\*H=5"):
        figures.rank_heads(scores, baseline, "itself", top=6)


def test_strongest_behaviour_names_each_head():
    scores, baseline = figures.average_behaviours([(TOKENS, _pattern_heads())])
    names = [figures.strongest_behaviour(scores, baseline, 1, h)[0] for h in range(1, 6)]
    assert names == ["previous token", "itself", "[CLS]", "[SEP]", "broad"]


def test_average_behaviours_over_sentences_of_different_lengths():
    short = ["[CLS]", "x", "[SEP]"]
    uniform_short = np.full((1, 5, 3, 3), 1 / 3)
    scores, baseline = figures.average_behaviours([(TOKENS, _pattern_heads()), (short, uniform_short)])
    assert scores["itself"][0, 1] == pytest.approx((1 + 1 / 3) / 2)
    assert baseline["itself"] == pytest.approx((0.2 + 1 / 3) / 2)
    with pytest.raises(ValueError, match="expected at least one"):
        figures.average_behaviours([])
    with pytest.raises(ValueError, match="the same L and H"):
        figures.average_behaviours([(TOKENS, _pattern_heads()), (short, np.full((2, 5, 3, 3), 1 / 3))])
    with pytest.raises(ValueError, match=r"expected weights of shape \(L, H, T, T\)"):
        figures.head_behaviours(np.zeros((2, 3, 3)), short)


# --------------------------------------------------------------------------------------------
# The explorer: twin and live app


def _plain(value) -> dict:
    return json.loads(json.dumps(value.to_plotly_json(), cls=PlotlyJSONEncoder))


def _apply(traces: list[dict], update: dict) -> None:
    """plotly.js's restyle of every trace: each attribute's list holds one value per trace."""
    for key, values in update.items():
        assert len(values) == len(traces), key
        for trace, value in zip(traces, values):
            trace[key] = value


def test_the_twin_replays_every_example_and_layer(encoder, tokenizer):
    explorer = figures.AttentionExplorer(encoder, tokenizer, EXAMPLES, model_name="tiny model")
    twin = explorer.static()
    layout = _plain(twin)["layout"]
    (menu,) = layout["updatemenus"]
    (slider,) = layout["sliders"]
    assert [b["label"] for b in menu["buttons"]] == list(EXAMPLES)
    assert [s["label"] for s in slider["steps"]] == ["1", "2", "3"]
    assert len(twin.data) == 3 * 2
    for button, (name, text) in zip(menu["buttons"], EXAMPLES.items()):
        prepared, weights = explorer.analyse(text)
        for step, layer in zip(slider["steps"], range(3)):
            traces = [_plain(t) for t in twin.data]
            data_update, layout_update = button["args"]
            for key in ("z", "x", "y"):  # plain JSON lists: plotly.js does not decode typed arrays in an update
                assert all(isinstance(value, list) for value in data_update[key]), key
            _apply(traces, data_update)
            assert step["method"] == "restyle"
            _apply(traces, step["args"][0])
            shown = [t for t in traces if t["visible"]]
            drawn = figures.heads_figure(weights[layer], prepared.tokens, title="x")
            expected = [_plain(t) for t in drawn.data]
            assert len(shown) == len(expected) == 2
            for got, want in zip(shown, expected):
                for key in ("z", "x", "y", "xaxis", "yaxis", "coloraxis"):
                    assert got[key] == want[key], (name, layer, key)
            assert name in layout_update["title.text"]


def test_the_twin_starts_at_the_first_example_and_the_chosen_layer(encoder, tokenizer):
    explorer = figures.AttentionExplorer(encoder, tokenizer, EXAMPLES, model_name="tiny model")
    twin = explorer.static(layer=2)
    assert [t.visible for t in twin.data] == [False, False, True, True, False, False]
    prepared, weights = explorer.analyse(EXAMPLES["the cat"])
    np.testing.assert_allclose(np.array(twin.data[2].z), np.round(weights[1, 0], 3), atol=1e-12)
    with pytest.raises(ValueError, match="expected layer in 1..3"):
        explorer.static(layer=4)


def test_head_view_and_its_verdict(encoder, tokenizer):
    explorer = figures.AttentionExplorer(encoder, tokenizer, EXAMPLES, model_name="tiny model")
    fig, verdict = explorer.head_view(EXAMPLES["two dogs"], 2, 1)
    assert fig.layout.title.text.startswith("tiny model, layer 2, head 1: ")
    assert verdict.startswith("Layer 2, head 1 in this sentence: ")
    with pytest.raises(ValueError, match="expected layer in 1..3 and head in 1..2"):
        explorer.head_view(EXAMPLES["two dogs"], 4, 1)
    with pytest.raises(ValueError, match="empty text"):
        explorer.head_view("", 1, 1)


def test_the_live_app_redraws_and_reports_bad_input(encoder, tokenizer, capsys):
    explorer = figures.AttentionExplorer(encoder, tokenizer, EXAMPLES, model_name="tiny model")
    drawn = []
    original = explorer.head_view
    explorer.head_view = lambda *args: drawn.append(args) or original(*args)
    app = explorer.live()
    (example, layer, head), text, message = app.children[0].children, app.children[1], app.children[2]
    assert text.value == EXAMPLES["the cat"]
    assert message.value.startswith("Layer 1, head 1 in this sentence")
    layer.value, head.value = 3, 2
    assert message.value.startswith("Layer 3, head 2 in this sentence")
    assert drawn[-1] == (EXAMPLES["the cat"], 3, 2)
    example.value = EXAMPLES["two dogs"]
    assert text.value == EXAMPLES["two dogs"] and drawn[-1] == (EXAMPLES["two dogs"], 3, 2)
    text.value = "   "
    assert message.value.startswith("Cannot explore this text: expected some text to explore, got an empty text")
    text.value = "I love NLP!"
    assert "became [UNK]" in message.value and "Layer 3, head 2" in message.value
    capsys.readouterr()  # outside a kernel, the figures are printed


def test_the_explorer_needs_examples(encoder, tokenizer):
    with pytest.raises(ValueError, match="expected at least one example sentence"):
        figures.AttentionExplorer(encoder, tokenizer, {}, model_name="tiny model")


def test_the_twin_dropdown_stands_right_of_its_label_at_any_width(encoder, tokenizer):
    layout = _plain(figures.AttentionExplorer(encoder, tokenizer, EXAMPLES, model_name="tiny model").static())["layout"]
    (menu,) = layout["updatemenus"]
    label = next(a for a in layout["annotations"] if a["text"] == "sentence:")
    # both at the left edge of the plot, the dropdown moved right by pixels: no gap that depends on the width
    assert menu["x"] == label["x"] == 0.0 and menu["xanchor"] == label["xanchor"] == "left"
    assert menu["pad"]["l"] >= 7 * len(label["text"])  # the label's width at 13 px


def test_the_twin_layer_slider_stands_at_the_top_under_the_dropdown(encoder, tokenizer):
    layout = _plain(figures.AttentionExplorer(encoder, tokenizer, EXAMPLES, model_name="tiny model").static())["layout"]
    (menu,), (slider,) = layout["updatemenus"], layout["sliders"]
    # both controls above the panels (a phone stacks the panels: a slider below them was screens away),
    # the dropdown higher than the slider by the slider's room
    assert slider["y"] == menu["y"] == 1.0 and slider["yanchor"] == menu["yanchor"] == "bottom"
    assert menu["pad"]["b"] - slider["pad"]["b"] >= 80
    assert layout["margin"]["t"] >= menu["pad"]["b"] + 100  # the title above the dropdown
