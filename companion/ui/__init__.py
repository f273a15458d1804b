"""The Kivy tablet app. The only package that imports Kivy; the rest of companion never imports it."""
