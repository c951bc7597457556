"""The file system as memwarden uses it: safe writes into the operator's folders (`files`), the
XDG base folders (`xdg`), the files shipped beside the code (`resources`) and the Jinja2
rendering of the files a person reads (`templating`)."""
