"""Small reusable widgets: flat buttons, steppers, the CALL button (keeps its touch time), the stack plot."""

from __future__ import annotations

from kivy.graphics import Color, Line, Rectangle
from kivy.metrics import dp, sp
from kivy.properties import ListProperty, NumericProperty, StringProperty
from kivy.core.text import Label as CoreLabel
from kivy.uix.boxlayout import BoxLayout
from kivy.uix.button import Button
from kivy.uix.togglebutton import ToggleButton
from kivy.uix.widget import Widget

PALETTE = [
    (0.95, 0.35, 0.30, 1), (0.30, 0.65, 0.95, 1), (0.98, 0.78, 0.25, 1), (0.45, 0.85, 0.45, 1),
    (0.80, 0.50, 0.95, 1), (0.98, 0.55, 0.15, 1), (0.40, 0.90, 0.85, 1), (0.92, 0.92, 0.92, 1),
]


def label(text, size="20sp", bold=False, color=(1, 1, 1, 1), halign="center"):
    """A label that wraps to its width (tables of players, results)."""
    from kivy.uix.label import Label

    lab = Label(text=text, font_size=size, bold=bold, color=color, halign=halign, valign="middle")
    lab.bind(size=lambda w, s: setattr(w, "text_size", s))
    return lab


class FlatButton(Button):
    """A flat, large-text button (>= 48dp high by the kv rule)."""

    bg = ListProperty([0.20, 0.32, 0.36, 1])
    tag = StringProperty("")  # a stable name for tests and screenshots ("Eris:n+", "seat:Eris")


class FlatToggle(ToggleButton):
    bg = ListProperty([0.20, 0.32, 0.36, 1])
    tag = StringProperty("")


class CallButton(FlatButton):
    """A seat's CALL button. Remembers the time its touch began (the touch's own timestamp, time.time())."""

    seat = NumericProperty(0)
    press_t = NumericProperty(0.0)

    def on_touch_down(self, touch):
        if self.collide_point(*touch.pos) and not self.disabled:
            self.press_t = touch.time_start
        return super().on_touch_down(touch)


class Stepper(BoxLayout):
    """label  [-]  value  [+]; ``choices`` (optional) gives the allowed values in order."""

    text = StringProperty("")
    value = NumericProperty(0)
    minimum = NumericProperty(0)
    maximum = NumericProperty(100)
    step = NumericProperty(1)
    choices = ListProperty([])
    unit = StringProperty("")

    def change(self, direction: int) -> None:
        if self.choices:
            vals = list(self.choices)
            if self.value in vals:
                i = vals.index(self.value)
            else:
                i = min(range(len(vals)), key=lambda k: abs(vals[k] - self.value))
            self.value = vals[max(0, min(len(vals) - 1, i + direction))]
        else:
            self.value = max(self.minimum, min(self.maximum, self.value + direction * self.step))


class StackPlot(Widget):
    """Each player's stack over the session, drawn with Kivy graphics (lines, axes, a legend)."""

    series = ListProperty([])  # list of {player: stack}, one per point in time
    players = ListProperty([])
    title = StringProperty("Stacks over the session")

    def __init__(self, **kw):
        super().__init__(**kw)
        self.bind(pos=self.redraw, size=self.redraw, series=self.redraw, players=self.redraw)

    def _text(self, text, size=16, color=(1, 1, 1, 1)):
        lab = CoreLabel(text=text, font_size=sp(size), color=color)
        lab.refresh()
        return lab.texture

    def redraw(self, *_):
        self.canvas.clear()
        pad_l, pad_b, pad_r, pad_t = dp(56), dp(40), dp(150), dp(40)
        x0, y0 = self.x + pad_l, self.y + pad_b
        w, h = self.width - pad_l - pad_r, self.height - pad_b - pad_t
        if w < 10 or h < 10:
            return
        with self.canvas:
            Color(0.10, 0.16, 0.18, 1)
            Rectangle(pos=self.pos, size=self.size)
            t = self._text(self.title, 18)
            Color(1, 1, 1, 1)
            Rectangle(texture=t, pos=(x0, self.top - pad_t + dp(8)), size=t.size)
            if not self.series or not self.players or any(p not in s for s in self.series for p in self.players):
                return  # players and series are being replaced (one property at a time)
            values = [s[p] for s in self.series for p in self.players]
            lo, hi = min(values), max(values)
            margin = max(2, (hi - lo) // 10)
            lo, hi = lo - margin, hi + margin
            n = len(self.series)
            dx = w / max(1, n - 1)

            def Y(v):
                return y0 + (v - lo) / (hi - lo) * h

            Color(0.5, 0.6, 0.6, 1)
            Line(points=[x0, y0, x0, y0 + h], width=1.2)
            Line(points=[x0, y0, x0 + w, y0], width=1.2)
            marks = {lo, hi, self.series[0][self.players[0]]} | ({0} if lo < 0 < hi else set())
            for v in sorted(marks):
                Color(0.3, 0.38, 0.38, 1)
                Line(points=[x0, Y(v), x0 + w, Y(v)], width=1, dash_length=4, dash_offset=4)
                Color(1, 1, 1, 1)
                tt = self._text(str(v), 14, (0.8, 0.85, 0.85, 1))
                Rectangle(texture=tt, pos=(x0 - tt.width - dp(6), Y(v) - tt.height / 2), size=tt.size)
            for i in range(n):
                tt = self._text("start" if i == 0 else f"#{i}", 13, (0.8, 0.85, 0.85, 1))
                Rectangle(texture=tt, pos=(x0 + i * dx - tt.width / 2, y0 - tt.height - dp(6)), size=tt.size)
            for k, p in enumerate(self.players):
                col = PALETTE[k % len(PALETTE)]
                Color(*col)
                pts = []
                for i, s in enumerate(self.series):
                    pts += [x0 + i * dx, Y(s[p])]
                if len(pts) >= 4:
                    Line(points=pts, width=dp(2))
                else:
                    Line(circle=(pts[0], pts[1], dp(4)), width=dp(2))
                tt = self._text(f"{p} {self.series[-1][p]}", 16, col)
                Rectangle(texture=tt, pos=(x0 + w + dp(12), y0 + h - (k + 1) * dp(26)), size=tt.size)
