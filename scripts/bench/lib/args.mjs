// The command-line reading every bench script shares: `--name value` options.

/** A reader of `--name value` in `argv`: the value, or `fallback` when the option is absent. */
export function optionOf(argv) {
  return (name, fallback) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : fallback;
  };
}
