"""Matrix adapter (matrix-nio): direct rooms with one person each, commands with `!` or `/`, numbered choices and
reactions instead of buttons. Entry point: `adapters.matrix.adapter.MatrixAdapter` (started by `companion run`
when the Matrix settings are present)."""
