"""Option layouts: the vocabulary, reference models, decoders, pictures."""
