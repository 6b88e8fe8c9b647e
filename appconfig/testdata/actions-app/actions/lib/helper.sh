echo helper
