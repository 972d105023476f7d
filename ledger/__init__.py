"""The tamper-evident log: framed segments, an RFC 6962 Merkle tree, signed checkpoints, proofs."""
