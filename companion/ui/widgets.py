"""Small reusable widgets: flat buttons, steppers, the CALL button (keeps its touch time), the stack plot."""

from __future__ import annotations

from kivy.clock import Clock
from kivy.graphics import Color, Line, Rectangle
from kivy.metrics import dp, sp
from kivy.properties import ListProperty, NumericProperty, StringProperty
from kivy.core.text import Label as CoreLabel
from kivy.uix.boxlayout import BoxLayout
from kivy.uix.button import Button
from kivy.uix.gridlayout import GridLayout
from kivy.uix.label import Label
from kivy.uix.togglebutton import ToggleButton
from kivy.uix.widget import Widget

PALETTE = [
    (0.95, 0.35, 0.30, 1), (0.30, 0.65, 0.95, 1), (0.98, 0.78, 0.25, 1), (0.45, 0.85, 0.45, 1),
    (0.80, 0.50, 0.95, 1), (0.98, 0.55, 0.15, 1), (0.40, 0.90, 0.85, 1), (0.92, 0.92, 0.92, 1),
]


LEGEND_SHARE = 0.3  # the stack plot's legend takes at most this share of its width
FIT_PAD = 4  # dp kept clear on each side of a fitted text
FIT_STEP = 0.9  # each try's font size as a share of the last one's
FIT_FLOOR = 0.5  # the smallest font a fitted text is given, as a share of the size asked for


class FitText:
    """Text that stays inside its widget (a player's name may be 32 characters long): wrapped to the widget's
    width and, where that would spill above or below it, set smaller, step by step, down to FIT_FLOOR of the font
    size asked for (the kv rule's or the caller's). A text that fits is left at the size asked for."""

    def __init__(self, **kw):
        self._asked_font = None
        self._fitting = False
        self._refit = Clock.create_trigger(self.fit_text, -1)
        super().__init__(**kw)
        self._asked_font = self.font_size
        self.bind(size=self._refit, text=self._refit, font_size=self._font_asked, bold=self._refit)
        self._refit()

    def _font_asked(self, _w, value):
        if not self._fitting:
            self._asked_font = value
            self._refit()

    def fit_text(self, *_):
        if self._asked_font is None or self.width <= 1:
            return
        self._fitting = True
        try:
            pad = dp(FIT_PAD)
            self.text_size = (max(1.0, self.width - 2 * pad), None)
            self.font_size = size = self._asked_font
            self.texture_update()
            # the height of the text as laid out (Kivy 2.3.1 keeps it in CoreLabel._internal_size)
            while self._label._internal_size[1] > self.height - pad and size * FIT_STEP >= self._asked_font * FIT_FLOOR:
                size *= FIT_STEP
                self.font_size = size
                self.texture_update()
        finally:
            self._fitting = False


def label(text, size="20sp", bold=False, color=(1, 1, 1, 1), halign="center", **kw):
    """A label that wraps to its width, set smaller where it would spill (tables of players, results)."""
    return FitLabel(text=text, font_size=size, bold=bold, color=color, halign=halign, valign="middle", **kw)


class FitLabel(FitText, Label):
    """A label whose text stays inside it (FitText)."""


class FitGrid(GridLayout):
    """A grid of rows (a player each) whose rows are ``row_max`` high where there is room, and shorter where there
    is not (eight players' rows and the header stay inside the grid, above the buttons below it)."""

    row_max = NumericProperty(dp(56))

    def __init__(self, **kw):
        super().__init__(**kw)
        self.row_force_default = True
        self.bind(children=self._fit_rows, height=self._fit_rows, row_max=self._fit_rows, cols=self._fit_rows)
        self._fit_rows()

    def _fit_rows(self, *_):
        cols = self.cols or 1
        rows = max(1, -(-len(self.children) // cols))
        free = self.height - self.padding[1] - self.padding[3] - self.spacing[1] * (rows - 1)  # [l, t, r, b]; [h, v]
        self.row_default_height = max(1.0, min(self.row_max, free / rows))


class FlatButton(FitText, Button):
    """A flat, large-text button (>= 48dp high by the kv rule); its text stays inside it (FitText)."""

    bg = ListProperty([0.20, 0.32, 0.36, 1])
    tag = StringProperty("")  # a stable name for tests and screenshots ("Eris:n+", "seat:Eris")


class FlatToggle(FitText, ToggleButton):
    """A flat toggle (a seat, a rank, a player); its text stays inside it (FitText)."""

    bg = ListProperty([0.20, 0.32, 0.36, 1])
    tag = StringProperty("")

    def _release_group(self, current):
        """Kivy 2.3.1's own loop walks a copy of the group's weak references and removes a dead one from the group;
        when the collector frees an old toggle of the group while the loop runs (screens rebuild their seat toggles),
        the reference's callback has already removed it and the loop raises ValueError out of the touch (seen in
        CI, session 62). Here the group's live toggles are held while they are released, so none dies mid-loop."""
        if self.group is None:
            return
        widgets = self.get_widgets(self.group)
        try:
            for widget in widgets:
                if widget is not current:
                    widget.state = "normal"
        finally:
            del widgets


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

    legend_right = NumericProperty(0)  # where the legend's widest entry ends (it stays inside the plot)

    def _text(self, text, size=16, color=(1, 1, 1, 1), width=None):
        """A text's texture; ``width``: at most that wide, shortened in its middle (a long name keeps its end and
        the stack after it)."""
        kw = dict(text_size=(width, None), shorten=True, shorten_from="center") if width else {}
        lab = CoreLabel(text=text, font_size=sp(size), color=color, **kw)
        lab.refresh()
        return lab.texture

    def _legend(self):
        """The legend's entries (one texture per player, "name stack") at most LEGEND_SHARE of the plot wide."""
        cap = max(dp(60), self.width * LEGEND_SHARE)
        out = []
        for k, p in enumerate(self.players):
            text, col = f"{p} {self.series[-1][p]}", PALETTE[k % len(PALETTE)]
            tt = self._text(text, 16, col)
            out.append(tt if tt.width <= cap else self._text(text, 16, col, width=cap))
        return out

    def redraw(self, *_):
        self.canvas.clear()
        ok = bool(self.series and self.players) and all(p in s for s in self.series for p in self.players)
        legend = self._legend() if ok else []
        pad_r = max([dp(150)] + [t.width + dp(24) for t in legend])
        pad_l, pad_b, pad_t = dp(56), dp(40), dp(40)
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
            if not ok:
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
                tt = legend[k]
                Rectangle(texture=tt, pos=(x0 + w + dp(12), y0 + h - (k + 1) * dp(26)), size=tt.size)
            self.legend_right = max((x0 + w + dp(12) + t.width for t in legend), default=0)
