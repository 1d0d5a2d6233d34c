module.exports = require('./temp-root.cjs').teardown;
