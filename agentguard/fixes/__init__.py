"""The edit toolkit rules build their fixes with: the fix context, LibCST helpers and text edits."""
