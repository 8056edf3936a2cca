"""``argonishche bench``, in the manner of ``openssl speed``: our backends against the peers.

Honest by construction:

- every subject must produce the same tag at a point before any of them is timed;
- subjects are timed **interleaved** (round-robin, rotating the order each repetition), so drift
  in a shared, noisy machine's speed hits all of them alike, and ratios are computed from the
  same repetitions;
- every figure is a median over repetitions, shown with its min and max and its spread, and the
  run ends with a verdict on how noisy the machine was (spreads, load average, CPU steal);
- the mode is named on every row: ``hot`` is steady state (the same inputs hashed back to back,
  caches and allocator warm, our work memory reused); ``cold`` is one hash per sample after a
  read of a buffer larger than the last-level cache, with work memory allocated for that hash
  (``allocator="system"``, as the reference implementation and the peers do);
- time is wall time (``perf_counter``), never CPU time, which counts every thread's work.
  Cycles are core cycles, from a timed chain of dependent additions, not TSC ticks.

Where each part is, lower layers first (none imports one further down this list):

- ``progress``: the progress bar drawn on a terminal's stderr;
- ``machine``: the machine's description, its last-level cache, its load and CPU steal;
- ``timing``: subjects, interleaved repetitions, medians and spreads, hot and cold (cache
  eviction), the core clock estimate (with the compiled helper ``_clock``);
- ``points``: the Argon2 parameter points, the password and the salt;
- ``peers``: argon2-cffi, PyNaCl and cryptography, imported only when asked for;
- ``report``: the tables, ratios and their JSON, and the noise verdict;
- ``suites``: what is measured: Argon2 points, allocators x wipe, batch, start-up, BLAKE2b;
- ``plot``: ``--plot``, with matplotlib (optional);
- ``command``: the ``bench`` subcommand's flags and run, added to the CLI by ``_cli``.
"""
