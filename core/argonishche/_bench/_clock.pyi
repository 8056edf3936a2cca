"""Types of the cffi extension argonishche._bench._clock (built by core/build_bench.py)."""

class _Lib:
    def argonishche_dependent_adds(self, rounds: int, /) -> int: ...

lib: _Lib
