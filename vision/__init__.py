"""Vision: card-face renderers, synthetic scenes, training, and the runtime card reader."""
