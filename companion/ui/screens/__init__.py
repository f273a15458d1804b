"""The shared screens (one small class + one kv file each); a game's own screens live in its package's ui/."""
