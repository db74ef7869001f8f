"""course_utils: the shared package of "Attention, step by step — from RNNs to DistilBERT".

One module per idea, in lesson order: ``env`` (set-up), ``data`` (the running example),
``plots`` (figures), ``tables`` (labelled text tables), ``rnn`` (lesson 01), ``checks`` (exercise
checkers), ``book`` (the Sphinx extension behind the site); ``authoring`` holds instructor tools.
"""

from . import env, plots

__version__ = "0.1.0"
__all__ = ["env", "plots", "__version__"]
