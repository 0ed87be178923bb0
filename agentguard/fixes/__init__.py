"""The edit toolkit rules build their fixes with: LibCST helpers and text edits."""
