"""The trust layer: what decides that a kernel may run, and what it keeps to decide faster.

A registered backend reaches selection only through :mod:`argonishche._trust.vetting`, which
runs, in this order:

1. :mod:`argonishche._trust.cpu_gate`: the CPU and the OS give every feature the backend needs
   (else its module is never imported);
2. :mod:`argonishche._trust.kernel_table`: the module's table has this ABI, its size, no NULL,
   the compiled target;
3. :mod:`argonishche._trust.self_test`: the quick known answers and placements, every start-up;
4. for a third-party module, :mod:`argonishche._trust.certification`: the full checks
   (:mod:`argonishche._trust.certification_checks`,
   :mod:`argonishche._trust.certification_blake2b`) once per code
   (:mod:`argonishche._trust.code_identity`), first in a child interpreter
   (:mod:`argonishche._trust.child_launch`, :mod:`argonishche._trust.certification_child`),
   remembered in the user's cache (:mod:`argonishche._trust.record_store`).

After selection, :mod:`argonishche._trust.witness` recomputes every Argon2 tag a third-party
kernel makes.
"""
