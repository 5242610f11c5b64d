"""Looking back over stored sessions: figures, miss causes, layer stability, plots.

Reads the store's call index (``Store.call_totals``) and ranks with the context engine: it imports
only context, providers, store and types. matplotlib is imported only by ``observe.plot``.
"""

from tiny_agent.observe.figures import Figures, LayerFigures, MissCause
from tiny_agent.observe.stats import Stats, stats

__all__ = ["Figures", "LayerFigures", "MissCause", "Stats", "stats"]
