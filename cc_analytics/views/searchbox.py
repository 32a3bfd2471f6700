"""A text box that tells the kernel only when typing pauses: the explorer's search field.

Imports: anywidget and traitlets (only when the explorer builds its live widget). The browser
keeps the keystrokes; ``value`` is synced ``debounce_ms`` after the last one, or at once on
Enter or when the box loses focus. Without anywidget the explorer falls back to an
``ipywidgets.Text`` that syncs on Enter only (``continuous_update=False``).
"""

from __future__ import annotations

import anywidget
import traitlets

DEBOUNCE_MS = 200

ESM = """
function render({ model, el }) {
  const box = document.createElement("div");
  box.className = "cc-search widget-inline-hbox";
  const label = document.createElement("label");
  label.className = "widget-label";
  label.textContent = model.get("description");
  const input = document.createElement("input");
  input.type = "text";
  input.className = "widget-input";
  input.placeholder = model.get("placeholder");
  input.value = model.get("value");
  input.style.flex = "1 1 auto";
  box.append(label, input);
  el.appendChild(box);
  let timer = null;
  const send = () => {
    clearTimeout(timer);
    timer = null;
    if (model.get("value") !== input.value) {
      model.set("value", input.value);
      model.save_changes();
    }
  };
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(send, model.get("debounce_ms"));
  });
  input.addEventListener("keydown", (event) => { if (event.key === "Enter") send(); });
  input.addEventListener("blur", send);
  const update = () => { if (timer === null && input.value !== model.get("value")) input.value = model.get("value"); };
  model.on("change:value", update);
  return () => { clearTimeout(timer); model.off("change:value", update); };
}
export default { render };
"""

CSS = """
.cc-search { display: flex; align-items: center; width: 100%; }
.cc-search input { min-width: 0; }
"""


class SearchBox(anywidget.AnyWidget):  # type: ignore[misc]
    """A search field whose ``value`` reaches the kernel once per pause in typing.

    Examples:
        >>> box = SearchBox(placeholder="search id, project, model")
        >>> box.value, box.debounce_ms
        ('', 200)
    """

    _esm = ESM
    _css = CSS
    value = traitlets.Unicode("").tag(sync=True)
    description = traitlets.Unicode("search").tag(sync=True)
    placeholder = traitlets.Unicode("").tag(sync=True)
    debounce_ms = traitlets.Int(DEBOUNCE_MS).tag(sync=True)


__all__ = ["DEBOUNCE_MS", "SearchBox"]
