# frozen_string_literal: true
require 'json'
require_relative 'helpers/format'

module Shop
  VERSION = '1.2.0'

  class Cart < Base
    attr_reader :items

    def initialize(items = [])
      @items = items
    end

    def total = items.sum(&:price)

    def self.empty
      new([])
    end

    class << self
      def from_json(text)
        new(JSON.parse(text))
      end
    end

    if defined?(Rails)
      def rails?
        true
      end
    end
  end

  class Shop::Order; end
end

Shop.configure do
  def helper_in_block
    "def not_a_method; end"
  end
end
