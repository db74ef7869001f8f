"""course_utils: the shared package of "Attention, step by step — from RNNs to DistilBERT".

One module per idea, in lesson order: ``env`` (set-up), ``plots`` (figures), ``rnn`` (lesson 01),
``checks`` (exercise checkers), ``book`` (the Sphinx extension behind the site).
"""

from . import env, plots

__version__ = "0.1.0"
__all__ = ["env", "plots", "__version__"]
