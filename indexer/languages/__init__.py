"""Language modules: one per language, each an extractor (per file, cached) plus a resolver (per corpus)."""
