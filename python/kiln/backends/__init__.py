"""Backends that take over parts of a program from the CPU (today: Arm Ethos-U)."""
