"""Mutation testing: hand-written regression mutants and generated ones."""
