"""The lessons' own figures and explorers, one module per lesson idea.

A lesson writes ``from course_utils import figures`` and then ``figures.positional_explorer()``.
Every explorer is drawn by one plotly function and shown live in a running notebook, kernel-free
on the site (:mod:`course_utils.widgets` holds that machinery; :mod:`course_utils.plots` the
generic figure builders).

======================  ======  =================================================================
module                  lesson  what it draws
======================  ======  =================================================================
``rnn``                 01      the RNN unrolled; one LSTM step, its cell state a line with ⊙f and
                                +i⊙g on it; a BiLSTM's states and its two readers;
                                the RNN's sequential steps against attention's one step
``tokens``              02      WordPiece's greedy split; a lookup as one-hot × table; the rows a
                                step's gradient moves
``positional``          03      one position's sinusoidal encoding, in its table; its explorer;
                                a token embedding plus position encodings, in two dimensions;
                                a few positions' vectors and the pairs in which they differ
``boxes``               all     box diagrams drawn from the numbers (the house style)
``canvas``              all     drawn diagrams: bars, strips, grids and arrows placed in pixels,
                                a laptop layout and a phone layout, labels checked for collisions
``rotation``            03, 09  a sinusoidal pair moved k positions on; RoPE's query and key
                                turned by their positions
``self_attention``      04      the soft search in the plane of the keys; one query's path, box
                                by box; every query at once, as matrices; multi-head
                                split, attend, merge, drawn; its shape journey as tensor blocks; multi-head split, attend, merge;
                                one query's scores, weights and output; the query explorer;
                                where each token reads from (attention as information flow)
``masking``             05      scores before and after a padding or causal mask; its explorer;
                                a padding mask broadcast against the scores; the masks of an
                                encoder, a decoder and an encoder–decoder side by side
``mlm``                 05      one sentence through BERT's 15% and 80/10/10 masking
``pattern_finder``      06      each attention head's behaviours (previous token, [CLS], ...)
``attention_explorer``  06      every head's attention map, live or kernel-free
``encoder_measures``    06      the gradient's norm at each depth, log and linear; the adverb ×
                                adjective counts of semantic prosody; where the parameters sit;
                                every head's behaviours, layer by layer
``encoder``             06, 09  one post-LN block as a residual stream; a post-LN block beside a
                                pre-LN one; one token's vector before and after LayerNorm;
                                DistilBERT-base stage by stage, and what BERT-base adds
``encoder_diagrams``    06      the feed-forward network on every token with the same weights;
                                which text reaches the teacher, the held-out words' path
``distillation``        07      every token's probability by rank; a distribution softened by a
                                temperature, its explorer; one step of distillation; the
                                student's copy of the teacher; where a start keeps the held-out
                                words' polarity; one token's soft target; who labels what each
                                few-label arm reads
``comparisons``         07      how to read a comparison of arms run with the same seeds: each
                                seed's difference, the mean, the interval, the verdict; Holm's
                                step-down; the budget curve
``fine_tuning``         08      one encoder feeding its task heads, each reading its own
                                vectors; the learning rate of each fine-tuning step;
                                a frozen encoder's features beside fine-tuning; each kind's
                                accuracy from step 0; word labels on WordPiece pieces;
                                accuracy against the peak learning rate
``since_distilbert``    09      next-token targets under the causal mask; a KV cache growing;
                                query heads sharing key/value heads; the
                                online softmax's blocks and running maximum
======================  ======  =================================================================
"""

from .attention_explorer import AttentionExplorer, head_figure, heads_figure
from .comparisons import ComparisonRow, budget_figure, comparison_rows, differences_figure, holm_figure
from .distillation import (
    copy_figure,
    distillation_step_figure,
    entropy,
    few_labels_figure,
    one_token_figure,
    polarity_figure,
    ranked_guesses_figure,
    softened,
    temperature_explorer,
    temperature_figure,
)
from .encoder import architecture_figure, block_figure, layer_norm_figure, layer_norm_numbers, post_pre_ln_figure
from .encoder_diagrams import feed_forward_figure, feed_forward_numbers, feed_forward_weights, sentiment_task_figure
from .encoder_measures import behaviours_figure, gradient_depth_figure, parameter_figure, prosody_figure
from .fine_tuning import (
    cls_projection_figure,
    frozen_vs_fine_tuned_figure,
    kind_curves_figure,
    label_alignment_figure,
    principal_plane,
    rate_sweep_figure,
    schedule_figure,
    task_heads_figure,
)
from .masking import (
    MASK_KINDS,
    blocked_row_figure,
    mask_broadcast_figure,
    mask_of_kind,
    mask_placement_figure,
    masked_attention_figure,
    masking_explorer,
    model_masks_figure,
)
from .mlm import MLM_OUTCOMES, mlm_figure, mlm_outcomes, mlm_shares
from .pattern_finder import (
    BEHAVIOURS,
    PreparedText,
    RankedHead,
    attention_maps,
    attention_samples,
    average_behaviours,
    head_behaviours,
    max_positions,
    prepare_text,
    rank_heads,
    strongest_behaviour,
    uniform_behaviours,
)
from .positional import (
    dots_by_distance_figure,
    embedding_plus_position_figure,
    pair_distances,
    position_vectors_figure,
    positional_encoding_figure,
    positional_explorer,
    sinusoidal_table_figure,
    wavelength_rows,
)
from .rnn import bilstm_states_figure, lstm_cell_figure, lstm_cell_numbers, rnn_unrolled_figure, sequential_steps_figure
from .rotation import position_shift_figure, rope_pair_figure, rope_pair_numbers
from .self_attention import (
    attention_flow,
    attention_matrices_figure,
    attention_matrices_numbers,
    multi_head_figure,
    multi_head_numbers,
    qkv_explorer,
    qkv_token_figure,
    query_path_figure,
    query_path_numbers,
    query_weights_figure,
    shape_journey_figure,
    shape_journey_steps,
    soft_search_figure,
    soft_search_numbers,
)
from .since_distilbert import kv_cache_figure, kv_sharing_figure, next_token_figure, online_softmax_figure
from .tokens import (
    attention_mask_figure,
    embedding_lookup_figure,
    extremes_first,
    gradient_rows_figure,
    word_scatter_figure,
    wordpiece_figure,
)

__all__ = [
    "AttentionExplorer",
    "ComparisonRow",
    "budget_figure",
    "cls_projection_figure",
    "comparison_rows",
    "differences_figure",
    "distillation_step_figure",
    "few_labels_figure",
    "holm_figure",
    "kind_curves_figure",
    "label_alignment_figure",
    "one_token_figure",
    "principal_plane",
    "BEHAVIOURS",
    "MASK_KINDS",
    "MLM_OUTCOMES",
    "PreparedText",
    "RankedHead",
    "architecture_figure",
    "attention_flow",
    "attention_mask_figure",
    "attention_maps",
    "attention_matrices_figure",
    "attention_matrices_numbers",
    "attention_samples",
    "average_behaviours",
    "bilstm_states_figure",
    "block_figure",
    "behaviours_figure",
    "gradient_depth_figure",
    "parameter_figure",
    "prosody_figure",
    "blocked_row_figure",
    "copy_figure",
    "dots_by_distance_figure",
    "embedding_lookup_figure",
    "embedding_plus_position_figure",
    "entropy",
    "feed_forward_figure",
    "feed_forward_numbers",
    "feed_forward_weights",
    "extremes_first",
    "frozen_vs_fine_tuned_figure",
    "gradient_rows_figure",
    "head_behaviours",
    "head_figure",
    "heads_figure",
    "kv_cache_figure",
    "kv_sharing_figure",
    "layer_norm_figure",
    "layer_norm_numbers",
    "lstm_cell_figure",
    "lstm_cell_numbers",
    "mask_broadcast_figure",
    "mask_of_kind",
    "mask_placement_figure",
    "masked_attention_figure",
    "masking_explorer",
    "max_positions",
    "mlm_figure",
    "mlm_outcomes",
    "mlm_shares",
    "model_masks_figure",
    "multi_head_figure",
    "multi_head_numbers",
    "next_token_figure",
    "online_softmax_figure",
    "polarity_figure",
    "pair_distances",
    "position_shift_figure",
    "position_vectors_figure",
    "positional_encoding_figure",
    "positional_explorer",
    "post_pre_ln_figure",
    "prepare_text",
    "qkv_explorer",
    "qkv_token_figure",
    "query_path_figure",
    "query_path_numbers",
    "query_weights_figure",
    "rank_heads",
    "rate_sweep_figure",
    "ranked_guesses_figure",
    "rnn_unrolled_figure",
    "rope_pair_figure",
    "rope_pair_numbers",
    "schedule_figure",
    "sentiment_task_figure",
    "sequential_steps_figure",
    "shape_journey_figure",
    "shape_journey_steps",
    "sinusoidal_table_figure",
    "soft_search_figure",
    "soft_search_numbers",
    "softened",
    "strongest_behaviour",
    "task_heads_figure",
    "temperature_explorer",
    "temperature_figure",
    "uniform_behaviours",
    "wavelength_rows",
    "word_scatter_figure",
    "wordpiece_figure",
]
