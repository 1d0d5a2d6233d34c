module.exports = require('./temp-root.cjs').setup;
