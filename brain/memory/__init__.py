"""The synapse memory: short-term capture (`capture`), promotion into a weighted graph of nodes and directed
edges (`promotion`, `weights`), daily decay (`decay`), semantic facts (`facts`) and recall (`api.Memory`).
Tables in `models`, tuning in `settings`, embeddings behind the `embedder.Embedder` protocol."""
