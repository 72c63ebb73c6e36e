// function commentedOut() {}
import React, { useState } from "react";
const { join } = require("path");

const RE = /[/"'`]+/g;
const half = 10 / 2 / 1;

export function App({ title, items }) {
  const [count, setCount] = useState(0);
  const label = `count: ${count > 1 ? `${count} items` : "one {item}"}`;
  return (
    <div className="app" onClick={() => setCount(count + 1)}>
      <h1>{title}</h1>
      {items.map((item) => <Item key={item.id} {...item} />)}
    </div>
  );
}

export default class Counter extends React.Component {
  state = { n: 0 };
  static defaultProps = { step: 1 };
  increment = () => {
    this.setState({ n: this.state.n + this.props.step });
  };
  #hidden() {}
  render() {
    return <span>{this.state.n}</span>;
  }
}

function Legacy(name) {
  this.name = name;
}

Legacy.prototype.greet = function () {
  return "hi " + this.name;
};

module.exports.helper = function helper() {};

export const Item = ({ id }) => <li>{join("a", String(id))}</li>;

export function* ids() {
  yield 1;
}
