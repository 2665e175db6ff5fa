"""memoturn typed memories (../shared/specs/memoturn-typed-memories.md): catalogue, model, client protocol, checks."""
