<?php

declare(strict_types=1);

namespace App\Routing;

use Psr\Http\Message\ResponseInterface;
use App\Routing\Route as BaseRoute;

interface RouterInterface
{
    public function map(string $method, string $pattern): Route;
}

/** "class Fake {}" in a doc block */
abstract class Router implements RouterInterface
{
    public const VERSION = '4.0';

    private array $routes = [];

    public function __construct(private string $base = '') {}

    public function map(string $method, string $pattern): Route
    {
        $s = "function notAFunction() {}";
        return $this->routes[] = new Route($method, $pattern);
    }

    public static function create(): static
    {
        return new static();
    }
}

trait Named
{
    public function name(): string { return static::class; }
}

enum Method: string
{
    case Get = 'GET';
}

function route_url(string $name): string
{
    return '/' . $name;
}
